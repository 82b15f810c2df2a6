import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { performance } from 'node:perf_hooks';
import { ContextFold } from '../engine/context-fold.js';
import type { RetrievalMode } from '../engine/types.js';
import { resolveTokenizer } from '../extract/tokenizer.js';
import { summarizeTurn } from '../harness/summarize.js';
import { compareCodePoints } from '../protocol/canonical-json.js';
import { UsageError } from '../protocol/errors.js';
import { loadTrajectory } from './load.js';
import { scoreQuestion, summarizeRows } from './score.js';
import type { EvalQuestion, EvalResult, EvalRow, TrajectoryTurn } from './types.js';

/** Options of {@link runEval}. */
export interface RunEvalOptions {
  questions: readonly EvalQuestion[];
  /** Directory of `<trajectory>.jsonl` files. */
  trajectoriesDir: string;
  /** Retrieval mode under test. */
  mode: RetrievalMode;
  /** The engine's summariser for folded turns. Default: the harness's `summarizeTurn`. */
  summarize?: (turn: TrajectoryTurn) => string;
  /** Parent of the temporary stores. Default: the OS temp directory. */
  workDir?: string;
  /** Called after each question. */
  onProgress?: (done: number, total: number) => void;
}

/**
 * Runs the retrieval eval (eval/README.md): per trajectory, turns are folded in order into a
 * fresh store; when a question's `asked_after_step` is reached, every turn up to it is folded and
 * the question is paged in as the incoming prompt under the default policy (o200k tokens,
 * 3500 per turn, 3000 per call). Scores are computed from the verified pages; the scan is timed
 * on its own. Temporary stores are removed afterwards.
 *
 * @example
 * const { summary } = await runEval({ questions, trajectoriesDir: 'data/trajectories', mode: 'ranked' });
 * summary.hit_rate; // share of questions whose answer was paged in
 */
export async function runEval(options: RunEvalOptions): Promise<EvalResult> {
  const summarize = options.summarize ?? ((t: TrajectoryTurn) => summarizeTurn(t));
  const tokenizer = resolveTokenizer('o200k');
  const count = (text: string) => tokenizer.count(text);
  const byTrajectory = new Map<string, EvalQuestion[]>();
  for (const q of options.questions) {
    const list = byTrajectory.get(q.trajectory);
    if (list) list.push(q);
    else byTrajectory.set(q.trajectory, [q]);
  }
  const rowsById = new Map<string, EvalRow>();
  const total = options.questions.length;
  const names = [...byTrajectory.keys()].sort(compareCodePoints);
  const work = mkdtempSync(join(options.workDir ?? tmpdir(), 'cf-eval-'));
  try {
    for (const [i, name] of names.entries()) {
      const turns = loadTrajectory(options.trajectoriesDir, name);
      const questions = [...byTrajectory.get(name)!].sort(
        (a, b) => a.asked_after_step - b.asked_after_step || compareCodePoints(a.id, b.id),
      );
      const engine = await ContextFold.open({
        dir: join(work, String(i), '.contextfold'),
        tokenizer: 'o200k',
        retrieval: options.mode,
      });
      try {
        let folded = 0;
        for (const q of questions) {
          if (q.asked_after_step >= turns.length) {
            throw new UsageError(
              `question ${q.id}: asked_after_step ${q.asked_after_step} is past the end of trajectory ${name} (${turns.length} turns)`,
            );
          }
          const batch = turns.slice(folded, q.asked_after_step + 1);
          if (batch.length > 0) {
            await engine.foldMany(
              batch.map((t) => ({ stepId: t.step_id, summary: summarize(t), content: t.content })),
            );
            folded = q.asked_after_step + 1;
          }
          const t0 = performance.now();
          await engine.scan(q.question, { mode: options.mode });
          const scanMs = performance.now() - t0;
          const result = await engine.pageIn(q.question, { mode: options.mode });
          rowsById.set(q.id, scoreQuestion({ question: q, pages: result.pages, count, scanMs }));
          options.onProgress?.(rowsById.size, total);
        }
      } finally {
        await engine.close({ compact: false });
      }
    }
  } finally {
    rmSync(work, { recursive: true, force: true });
  }
  const rows = options.questions.map((q) => rowsById.get(q.id)!);
  return { mode: options.mode, summary: summarizeRows(rows), rows };
}
