/** Role of an imported turn. `tool` is a tool result that answers no known call. */
export type TurnRole = 'system' | 'user' | 'assistant' | 'tool';

/**
 * One turn of a history in the neutral form every importer produces: the step id is the turn's
 * position in the conversation, `content` is the rendered payload that gets folded.
 *
 * @example
 * const turn: ImportedTurn = { step_id: 0, role: 'user', content: 'Fix the failing test' };
 */
export interface ImportedTurn {
  step_id: number;
  role: TurnRole;
  content: string;
}

/** Input formats `contextfold import` understands. */
export type ImportFormat =
  | 'claude-code'
  | 'codex'
  | 'openai'
  | 'anthropic'
  | 'aider'
  | 'swe-agent'
  | 'turns';

/** Every {@link ImportFormat}, in the order the CLI lists them. */
export const IMPORT_FORMATS: readonly ImportFormat[] = [
  'claude-code',
  'codex',
  'openai',
  'anthropic',
  'aider',
  'swe-agent',
  'turns',
];
