import { FEATURE_NAMES, type FeatureName } from '../retrieval/linear-scorer.js';
import type { NodeAnalysis } from '../retrieval/node-analysis.js';
import { RANKED_DEFAULTS, type RankedTuning } from '../retrieval/ranked-scan.js';
import { leaveOneSessionOut } from './loso.js';
import { runEval } from './run-eval.js';
import { collectTraining, trainWeights } from './train.js';
import type { EvalQuestion, EvalSummary } from './types.js';

/** One component switched off: features kept at weight 0 (retrained without them) or a setting. */
export interface Ablation {
  name: string;
  exclude?: readonly FeatureName[];
  tuning?: Partial<RankedTuning>;
}

/** The components of the ranked page-in, each removed on its own from the full configuration. */
export const ABLATIONS: readonly Ablation[] = [
  { name: '(nothing: full)' },
  { name: 'best-block BM25', exclude: ['block', 'blockN', 'shapeBlockN', 'errBlockN'] },
  { name: 'turn coverage', exclude: ['turn', 'turnN'] },
  { name: 'header field', exclude: ['head', 'headN'] },
  { name: 'call/result (previous turn)', exclude: ['prev', 'prevN', 'union', 'unionN'] },
  { name: 'following turn', exclude: ['next', 'nextN'] },
  { name: 'neighbourhood (±3 turns)', exclude: ['ctx', 'ctxN'] },
  {
    name: 'per-prompt normalised coverage',
    // The `…N` features, and the products built on them (see FEATURE_NAMES).
    exclude: FEATURE_NAMES.filter((n) => n.endsWith('N')),
  },
  { name: 'answer shapes', exclude: ['shape', 'shapeTurn', 'shapeBlockN', 'shapeLatest'] },
  { name: 'failure signal', exclude: ['err', 'errBlockN'] },
  { name: 'prose', exclude: ['prose', 'proseTurn'] },
  { name: 'length', exclude: ['len'] },
  {
    name: 'recency and time cues',
    exclude: ['recLatest', 'recEarliest', 'recNone', 'shapeLatest'],
  },
  {
    name: 'interactions (shape, failure × best block; shape × recency)',
    exclude: ['shapeBlockN', 'errBlockN', 'shapeLatest'],
  },
  { name: 'prefix/stem expansion', tuning: { maxExtensions: 0, stemWeight: 0 } },
  { name: 'companion (call) pages', tuning: { companionTokens: 0 } },
  { name: 'residual cover (one owner)', tuning: { maxOwners: 1 } },
  { name: 'probability-sized pages (owners only)', tuning: { minProbability: 1.01 } },
  { name: 'evidence floor', tuning: { minEvidence: 0 } },
];

/** One row of the ablation table: the figures of each questions set without one component. */
export interface AblationRow {
  name: string;
  sets: { questions: string; summary: EvalSummary }[];
  /** With `loso`: leave-one-session-out on the training questions, everything refitted. */
  loso?: EvalSummary;
}

/** Options of {@link runAblations}. */
export interface AblationOptions {
  /** Questions the weights are trained on (the public set). */
  train: readonly EvalQuestion[];
  /** Sets measured (name and questions); only aggregates are kept. */
  sets: readonly { name: string; questions: readonly EvalQuestion[] }[];
  trajectoriesDir: string;
  /** The selection settings of the full configuration (default: the scan's defaults). */
  selection?: Partial<RankedTuning>;
  ablations?: readonly Ablation[];
  /**
   * Also measure each row leave-one-session-out on the training questions (weights without the
   * component and selection refitted per held-out session): what the component adds on sessions
   * the fit never saw. About one full fit per session per row.
   */
  loso?: boolean;
  onProgress?: (message: string) => void;
}

/**
 * The ablation table: for each component, the weights are retrained without its features (or the
 * setting is switched off) and every set is measured with the memory retriever. Removing one
 * component at a time from the full configuration shows what each adds.
 *
 * @example
 * const rows = await runAblations({ train: pub, sets: [{ name: 'public', questions: pub }], trajectoriesDir });
 */
export async function runAblations(options: AblationOptions): Promise<AblationRow[]> {
  const analyses = new Map<string, NodeAnalysis>();
  const items = collectTraining({
    questions: options.train,
    trajectoriesDir: options.trajectoriesDir,
    cache: analyses,
  });
  const selection = options.selection ?? {
    temperature: RANKED_DEFAULTS.temperature,
    minProbability: RANKED_DEFAULTS.minProbability,
  };
  const rows: AblationRow[] = [];
  for (const a of options.ablations ?? ABLATIONS) {
    options.onProgress?.(a.name);
    const weights = trainWeights(items, { exclude: a.exclude ?? [] });
    const tuning = { ...selection, ...a.tuning, weights };
    const sets: AblationRow['sets'] = [];
    for (const s of options.sets) {
      const r = await runEval({
        questions: s.questions,
        trajectoriesDir: options.trajectoriesDir,
        retriever: { kind: 'memory', tuning },
        analyses,
      });
      sets.push({ questions: s.name, summary: r.summary });
    }
    const row: AblationRow = { name: a.name, sets };
    if (options.loso) {
      const held = await leaveOneSessionOut({
        questions: options.train,
        trajectoriesDir: options.trajectoriesDir,
        analyses,
        exclude: a.exclude ?? [],
        tuning: a.tuning ?? {},
      });
      row.loso = held.summary;
    }
    rows.push(row);
  }
  return rows;
}
