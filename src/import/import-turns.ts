import type { ContextFoldEngine, FoldInput, FoldResult } from '../engine/types.js';
import { summarizeTurn } from '../harness/summarize.js';
import type { ImportedTurn } from './turn.js';

/** Options of {@link importTurns}. */
export interface ImportTurnsOptions {
  /** Summary of each turn. Default: the harness's offline `summarizeTurn` (deterministic, no model). */
  summarise?: (turn: ImportedTurn) => string;
  /** Called while folding, e.g. to draw a progress bar. */
  onProgress?: (done: number, total: number) => void;
}

/** What an import folded. */
export interface ImportTurnsResult {
  turns: number;
  /** Newly folded turns. */
  folded: number;
  /** Turns already in the store with the same payload (a re-import is a no-op). */
  already_folded: number;
  first_step: number | null;
  last_step: number | null;
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
 * (redacted by the engine, the batch jointly, as `foldMany` does): the engine redacts a summary
 * too, but a summary that quotes a secret cut short (`GITHUB_TOKEN=ghp_u8jz…`) no longer matches
 * its pattern. The payload stays the turn's own text; the fold redacts it.
 *
 * @example
 * const inputs = await redactedFoldInputs(engine, [{ step_id: 0, role: 'user', content: 'hi' }]);
 */
export async function redactedFoldInputs(
  engine: Pick<ContextFoldEngine, 'redactTexts'>,
  turns: readonly ImportedTurn[],
  summarise: (turn: ImportedTurn) => string = summarizeTurn,
): Promise<FoldInput[]> {
  const stored = await engine.redactTexts(turns.map((t) => t.content));
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
  turns: readonly ImportedTurn[],
  options: ImportTurnsOptions = {},
): Promise<ImportTurnsResult> {
  const inputs = await redactedFoldInputs(engine, turns, options.summarise);
  const results = inputs.length > 0 ? await engine.foldMany(inputs, options.onProgress) : [];
  const already = results.filter((r) => r.already_folded).length;
  return {
    turns: turns.length,
    folded: results.length - already,
    already_folded: already,
    first_step: turns[0]?.step_id ?? null,
    last_step: turns.at(-1)?.step_id ?? null,
    results,
  };
}
