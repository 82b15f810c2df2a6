import { UsageError } from '../../protocol/errors.js';
import { checkFields, str } from '../../protocol/schemas.js';

/** The hook events contextfold handles, as the CLI spells them. */
export type HookEvent = 'user-prompt-submit' | 'pre-compact' | 'session-start';

/** Every {@link HookEvent}. */
export const HOOK_EVENTS: readonly HookEvent[] = [
  'user-prompt-submit',
  'pre-compact',
  'session-start',
];

/** Claude Code's name of each event (`hook_event_name`, settings.json keys). */
export const CLAUDE_EVENT_NAMES: Record<HookEvent, string> = {
  'user-prompt-submit': 'UserPromptSubmit',
  'pre-compact': 'PreCompact',
  'session-start': 'SessionStart',
};

// Not starting with a dot: `.` and `..` would name the directory above the session store.
const PLAIN_ID = /^[A-Za-z0-9_-][A-Za-z0-9._-]{0,199}$/;

/**
 * The JSON a Claude Code command hook receives on stdin (common fields plus the event's own:
 * `prompt` for UserPromptSubmit, `trigger` for PreCompact, `source` for SessionStart). Other
 * fields are kept as they are.
 */
export interface HookInput {
  session_id: string;
  transcript_path: string;
  cwd?: string;
  hook_event_name?: string;
  prompt?: string;
  source?: string;
  trigger?: string;
  [field: string]: unknown;
}

// Checked by hand, not with a schema library: the hook is a fresh process on every prompt, and
// loading zod cost it about 100 ms.
const checkInput = (v: unknown): string | null =>
  checkFields(
    v,
    {
      session_id: (id) =>
        typeof id === 'string' && PLAIN_ID.test(id)
          ? null
          : 'must be a plain id (letters, digits, . _ -)',
      transcript_path: (p) => (typeof p === 'string' && p !== '' ? null : 'expected a path'),
    },
    { cwd: str, hook_event_name: str, prompt: str, source: str, trigger: str },
  );

/**
 * Parses and checks the hook input. The session id becomes a directory name, so only plain ids
 * are accepted.
 *
 * @example
 * parseHookInput('{"session_id":"abc","transcript_path":"/t.jsonl","prompt":"hi"}', 'user-prompt-submit');
 */
export function parseHookInput(text: string, event: HookEvent): HookInput {
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch {
    throw new UsageError(
      `hook input on stdin is not JSON; contextfold hook ${event} is meant to be run by Claude Code (see contextfold install claude-code)`,
    );
  }
  const problem = checkInput(value);
  if (problem) throw new UsageError(`hook input: ${problem}`);
  const input = value as HookInput;
  const expected = CLAUDE_EVENT_NAMES[event];
  if (input.hook_event_name !== undefined && input.hook_event_name !== expected) {
    throw new UsageError(
      `hook input is for ${input.hook_event_name}, but this is contextfold hook ${event} (${expected}); check the hooks in settings.json`,
    );
  }
  return input;
}
