import type { ContextFoldEngine, FoldInput, FoldResult } from '../engine/types.js';
import { summarizeTurn, wellFormed } from '../harness/summarize.js';
import { checkOptionKeys } from '../protocol/option-keys.js';
import type { ImportedTurn } from './turn.js';

/** Options of {@link importTurns}. */
export interface ImportTurnsOptions {
  /** Summary of each turn. Default: the harness's offline `summarizeTurn` (deterministic, no model). */
  summarise?: (turn: ImportedTurn) => string;
  /** Called while folding, e.g. to draw a progress bar (see `ContextFoldEngine.foldMany`). */
  onProgress?: (done: number, total: number, phase: 'preparing' | 'writing') => void;
}

/** Every option of `importTurns` (a misspelt `summarize` was ignored: the default summaries). */
const IMPORT_TURNS_OPTION_KEYS: Record<keyof ImportTurnsOptions, true> = {
  summarise: true,
  onProgress: true,
};

/** What an import folded. */
export interface ImportTurnsResult {
  turns: number;
  /** Newly folded turns. */
  folded: number;
  /** Turns already in the store with the same payload (a re-import is a no-op). */
  already_folded: number;
  first_step: number | null;
  last_step: number | null;
  /**
   * Steps whose text held a lone UTF-16 surrogate (half an emoji: Claude Code wrote some when
   * it cut a tool output mid-character). Such text has no UTF-8 form, so each one is stored as
   * U+FFFD; every other character of the turn is kept.
   */
  lone_surrogate_steps: number[];
  results: FoldResult[];
}

/**
 * The fold inputs for a parsed history: step id from the history, the rendered turn as the
 * payload, a deterministic summary of the text as given (for a store that redacts, prefer
 * {@link redactedFoldInputs}: its summaries are made from the redacted text).
 *
 * @example
 * const inputs = foldInputsFor([{ step_id: 0, role: 'user', content: 'hi' }]);
 */
export function foldInputsFor(
  turns: readonly ImportedTurn[],
  summarise: (turn: ImportedTurn) => string = summarizeTurn,
): FoldInput[] {
  return turns.map((t) => ({ stepId: t.step_id, summary: summarise(t), content: t.content }));
}

/**
 * {@link foldInputsFor} with each summary made from the turn as the store will keep it
 * (redacted by the engine, each turn on its own, as `foldMany` does): the engine redacts a
 * summary too, but a summary that quotes a secret cut short (`GITHUB_TOKEN=ghp_u8jz…`) no longer
 * matches its pattern. Turn by turn, so a summary never depends on the other turns of the batch
 * (re-importing a grown history stays a no-op). The payload stays the turn's own text; the fold
 * redacts it.
 *
 * @example
 * const inputs = await redactedFoldInputs(engine, [{ step_id: 0, role: 'user', content: 'hi' }]);
 */
export async function redactedFoldInputs(
  engine: Pick<ContextFoldEngine, 'redactTexts'>,
  turns: readonly ImportedTurn[],
  summarise: (turn: ImportedTurn) => string = summarizeTurn,
): Promise<FoldInput[]> {
  const stored: string[] = [];
  for (const t of turns) stored.push((await engine.redactTexts([t.content]))[0]!);
  return turns.map((t, i) => ({
    stepId: t.step_id,
    summary: summarise({ ...t, content: stored[i]! }),
    content: t.content,
  }));
}

/**
 * Folds a parsed history into a store in one batch (`foldMany` validates everything before it
 * writes, so a conflict leaves the store untouched). Re-importing the same history is a no-op.
 *
 * @example
 * const turns = parseHistory({ text, format: 'turns', source: 'run.jsonl' }).turns;
 * const r = await importTurns(engine, turns);
 */
export async function importTurns(
  engine: ContextFoldEngine,
  given: readonly ImportedTurn[],
  options: ImportTurnsOptions = {},
): Promise<ImportTurnsResult> {
  checkOptionKeys('importTurns', options, IMPORT_TURNS_OPTION_KEYS);
  const { turns, repaired } = storableTurns(given);
  const inputs = await redactedFoldInputs(engine, turns, options.summarise);
  const results = inputs.length > 0 ? await engine.foldMany(inputs, options.onProgress) : [];
  const already = results.filter((r) => r.already_folded).length;
  return {
    turns: turns.length,
    folded: results.length - already,
    already_folded: already,
    first_step: turns[0]?.step_id ?? null,
    last_step: turns.at(-1)?.step_id ?? null,
    lone_surrogate_steps: repaired,
    results,
  };
}

/**
 * The turns as a store can hold them: a lone UTF-16 surrogate (half an emoji, from a tool output
 * cut mid-character) has no UTF-8 form, and a fold refuses text that holds one. Each becomes
 * U+FFFD; `repaired` lists the steps, for the caller to report.
 *
 * @example
 * storableTurns([{ step_id: 0, role: 'tool', content: 'cut \uD83D' }]).repaired; // [0]
 */
export function storableTurns(turns: readonly ImportedTurn[]): {
  turns: ImportedTurn[];
  repaired: number[];
} {
  const repaired: number[] = [];
  const out = turns.map((t) => {
    if (!LONE_SURROGATE.test(t.content)) return t;
    repaired.push(t.step_id);
    return { ...t, content: wellFormed(t.content) };
  });
  return { turns: out, repaired };
}

const LONE_SURROGATE = /[\uD800-\uDBFF](?![\uDC00-\uDFFF])|(?<![\uD800-\uDBFF])[\uDC00-\uDFFF]/;
