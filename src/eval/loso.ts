import { compareCodePoints } from '../protocol/canonical-json.js';
import type { FeatureName, FeatureWeights } from '../retrieval/linear-scorer.js';
import type { NodeAnalysis } from '../retrieval/node-analysis.js';
import type { RankedTuning } from '../retrieval/ranked-scan.js';
import { runEval } from './run-eval.js';
import { groupSummary, summarizeRows } from './score.js';
import { collectTraining, trainWeights } from './train.js';
import type { EvalQuestion, EvalRow, EvalSummary, GroupSummary } from './types.js';

/**
 * The selection settings tried when fitting (the defaults are the grid point the same procedure
 * picks on all of the public set). Hit rate comes first (issue 9: beat the baseline on hit rate,
 * then keep precision high): among the points within one question of the best hit rate, the one
 * with the best token precision wins.
 */
export const SELECTION_GRID: readonly Partial<RankedTuning>[] = Object.freeze(
  [0.7, 1, 1.5].flatMap((temperature) =>
    [0.01, 0.03, 0.06].flatMap((minProbability) =>
      [10, 14].map((maxPages) => Object.freeze({ temperature, minProbability, maxPages })),
    ),
  ),
);

/** What fitting produced: the learned weights and the chosen selection settings. */
export interface FitResult {
  weights: FeatureWeights;
  selection: Partial<RankedTuning>;
  /** Hit rate and token precision of each grid point on the training questions. */
  grid: { selection: Partial<RankedTuning>; hit_rate: number; token_precision: number }[];
}

/** Options of {@link fitRanked} and {@link leaveOneSessionOut}. */
export interface FitOptions {
  questions: readonly EvalQuestion[];
  trajectoriesDir: string;
  grid?: readonly Partial<RankedTuning>[];
  /** Analyses shared across runs (text-only inputs; see `RetrieverContext.analyses`). */
  analyses?: Map<string, NodeAnalysis>;
  /** Features the weights leave at 0 (an ablation: fitted without them). */
  exclude?: readonly FeatureName[];
  /** Settings fixed on top of every grid point and of the held-out run (an ablation's switch). */
  tuning?: Partial<RankedTuning>;
  onProgress?: (message: string) => void;
}

/** Hit rate first; within one question of the best, token precision. */
function choose(grid: FitResult['grid'], questions: number): FitResult['grid'][number] {
  const best = Math.max(...grid.map((g) => g.hit_rate));
  const near = grid.filter((g) => g.hit_rate >= best - 1 / Math.max(1, questions) - 1e-9);
  return near.reduce((a, b) => (b.token_precision > a.token_precision ? b : a));
}

/**
 * Fits everything the ranked scan learns from data: the scorer's weights (pairwise logistic
 * regression, `trainWeights`) and the selection settings (under those weights, the grid point
 * with the best token precision among those within one question of the best hit rate).
 * Deterministic.
 *
 * @example
 * const fit = await fitRanked({ questions, trajectoriesDir });
 * fit.weights; // → ranked-weights.ts
 */
export async function fitRanked(options: FitOptions): Promise<FitResult> {
  const analyses = options.analyses ?? new Map<string, NodeAnalysis>();
  const weights = trainWeights(
    collectTraining({
      questions: options.questions,
      trajectoriesDir: options.trajectoriesDir,
      cache: analyses,
    }),
    { exclude: options.exclude ?? [] },
  );
  const grid: FitResult['grid'] = [];
  for (const selection of options.grid ?? SELECTION_GRID) {
    const r = await runEval({
      questions: options.questions,
      trajectoriesDir: options.trajectoriesDir,
      retriever: { kind: 'memory', tuning: { ...selection, ...options.tuning, weights } },
      analyses,
    });
    grid.push({
      selection,
      hit_rate: r.summary.hit_rate,
      token_precision: r.summary.token_precision ?? 0,
    });
  }
  return { weights, selection: choose(grid, options.questions.length).selection, grid };
}

/** One held-out session of a leave-one-session-out run. */
export interface LosoFold {
  session: string;
  /** Fitted on every other session. */
  fit: FitResult;
  /** The held-out session's figures under that fit. */
  summary: GroupSummary;
}

/** Result of {@link leaveOneSessionOut}. */
export interface LosoResult {
  mode: 'ranked-loso';
  /** Over every question, each answered by the fit that never saw its session. */
  summary: EvalSummary;
  rows: EvalRow[];
  folds: LosoFold[];
}

/**
 * Leave-one-session-out: for each session, fit on the questions of all other sessions
 * ({@link fitRanked}), then answer the held-out session's questions with that fit. The pooled
 * figures estimate how the learned parts do on a session they have never seen.
 *
 * @example
 * const { summary } = await leaveOneSessionOut({ questions, trajectoriesDir });
 * summary.hit_rate;
 */
export async function leaveOneSessionOut(options: FitOptions): Promise<LosoResult> {
  const analyses = options.analyses ?? new Map<string, NodeAnalysis>();
  const sessions = [...new Set(options.questions.map((q) => q.trajectory))].sort(compareCodePoints);
  const folds: LosoFold[] = [];
  const rowsById = new Map<string, EvalRow>();
  for (const session of sessions) {
    options.onProgress?.(`fold ${folds.length + 1}/${sessions.length}: ${session}`);
    const train = options.questions.filter((q) => q.trajectory !== session);
    const test = options.questions.filter((q) => q.trajectory === session);
    const fit = await fitRanked({ ...options, questions: train, analyses });
    const r = await runEval({
      questions: test,
      trajectoriesDir: options.trajectoriesDir,
      retriever: {
        kind: 'memory',
        tuning: { ...fit.selection, ...options.tuning, weights: fit.weights },
      },
      analyses,
    });
    for (const row of r.rows) rowsById.set(row.id, row);
    folds.push({ session, fit, summary: groupSummary(r.rows) });
  }
  const rows = options.questions.map((q) => rowsById.get(q.id)!);
  return { mode: 'ranked-loso', summary: summarizeRows(rows), rows, folds };
}
