import { rmSync } from 'node:fs';
import { join } from 'node:path';
import { resolveTokenizer } from '../extract/tokenizer.js';
import { compareCodePoints } from '../protocol/canonical-json.js';
import { UsageError } from '../protocol/errors.js';
import { groupBy } from '../protocol/group-by.js';
import type { RetrievalMode } from '../protocol/results.js';
import type { NodeAnalysis } from '../retrieval/node-analysis.js';
import { makeTempDir } from '../store/temp-dir.js';
import { familiesOf, familyOf } from './families.js';
import { loadTrajectory } from './load.js';
import {
  defaultEvalSummary,
  type EvalRetriever,
  openRetriever,
  retrieverName,
} from './retrievers.js';
import { scoreQuestion, summarizeRows } from './score.js';
import type { EvalQuestion, EvalResult, EvalRow, TrajectoryTurn } from './types.js';

/** Options of {@link runEval}. */
export interface RunEvalOptions {
  questions: readonly EvalQuestion[];
  /** Directory of `<trajectory>.jsonl` files. */
  trajectoriesDir: string;
  /** Retrieval mode under test, through the engine. Ignored when `retriever` is given. */
  mode?: RetrievalMode;
  /** The retriever under test (default: the engine in `mode`, default `ranked`). */
  retriever?: EvalRetriever;
  /** The engine's summariser for folded turns. Default: the harness's `summarizeTurn`. */
  summarize?: (turn: TrajectoryTurn) => string;
  /** Parent of the temporary stores. Default: the OS temp directory. */
  workDir?: string;
  /** Called after each question. */
  onProgress?: (done: number, total: number) => void;
  /** Analyses shared across runs of the memory retriever (see `RetrieverContext.analyses`). */
  analyses?: Map<string, NodeAnalysis>;
}

const byTrajectory = (questions: readonly EvalQuestion[]) =>
  groupBy(questions, (q) => q.trajectory);

/**
 * Checks every question against its trajectory before anything is measured: the trajectory
 * exists and parses, `asked_after_step` and every gold step are inside it. Throws a
 * {@link UsageError} naming the question on the first problem.
 *
 * @example
 * validateQuestions(questions, '../shared/data/trajectories'); // throws on a bad gold step
 */
export function validateQuestions(questions: readonly EvalQuestion[], trajectoriesDir: string) {
  for (const [name, qs] of byTrajectory(questions)) {
    const n = loadTrajectory(trajectoriesDir, name).length;
    for (const q of qs) {
      if (q.asked_after_step >= n) {
        throw new UsageError(
          `question ${q.id}: asked_after_step ${q.asked_after_step} is past the end of trajectory ${name} (${n} turns)`,
        );
      }
      const bad = q.gold_steps.find((s) => s >= n);
      if (bad !== undefined) {
        throw new UsageError(
          `question ${q.id}: gold step ${bad} is out of range for trajectory ${name} (${n} turns)`,
        );
      }
    }
  }
}

/**
 * Runs the retrieval eval (eval/README.md): per trajectory, turns are folded in order into a
 * fresh retriever (a temporary store for the engine); when a question's `asked_after_step` is
 * reached, every turn up to it is folded and the question is paged in as the incoming prompt
 * under the default policy (o200k tokens, 3500 per turn, 3000 per call). Questions are checked
 * against their trajectories first; temporary stores are removed afterwards.
 *
 * @example
 * const { summary } = await runEval({ questions, trajectoriesDir: 'data/trajectories' });
 * summary.hit_rate; // share of questions whose answer was paged in
 */
export async function runEval(options: RunEvalOptions): Promise<EvalResult> {
  validateQuestions(options.questions, options.trajectoriesDir);
  const retriever: EvalRetriever = options.retriever ?? {
    kind: 'engine',
    mode: options.mode ?? 'ranked',
  };
  const summarize = options.summarize ?? defaultEvalSummary;
  const tokenizer = resolveTokenizer('o200k');
  const count = (text: string) => tokenizer.count(text);
  const families = familiesOf(options.trajectoriesDir);
  const groups = byTrajectory(options.questions);
  const rowsById = new Map<string, EvalRow>();
  const total = options.questions.length;
  const work = makeTempDir('cf-eval-', options.workDir);
  try {
    for (const [i, name] of [...groups.keys()].sort(compareCodePoints).entries()) {
      const turns = loadTrajectory(options.trajectoriesDir, name);
      const questions = [...groups.get(name)!].sort(
        (a, b) => a.asked_after_step - b.asked_after_step || compareCodePoints(a.id, b.id),
      );
      const r = await openRetriever(retriever, {
        dir: join(work, String(i)),
        tokenizer,
        summarize,
        name,
        ...(options.analyses ? { analyses: options.analyses } : {}),
      });
      try {
        let folded = 0;
        for (const q of questions) {
          await r.fold(turns.slice(folded, q.asked_after_step + 1));
          folded = Math.max(folded, q.asked_after_step + 1);
          const { pages, scanMs } = await r.ask(q.question);
          const row = scoreQuestion({ question: q, pages, count, scanMs });
          row.family = familyOf(families, name);
          rowsById.set(q.id, row);
          options.onProgress?.(rowsById.size, total);
        }
      } finally {
        await r.close();
      }
    }
  } finally {
    rmSync(work, { recursive: true, force: true });
  }
  const rows = options.questions.map((q) => rowsById.get(q.id)!);
  return { mode: retrieverName(retriever), summary: summarizeRows(rows), rows };
}
