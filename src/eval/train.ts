import { resolveTokenizer } from '../extract/tokenizer.js';
import { compareCodePoints } from '../protocol/canonical-json.js';
import {
  FEATURE_NAMES,
  type FeatureName,
  type FeatureWeights,
} from '../retrieval/linear-scorer.js';
import { analyzeNode, type NodeAnalysis } from '../retrieval/node-analysis.js';
import { candidateFeatures } from '../retrieval/ranked-features.js';
import { RankedIndex } from '../retrieval/ranked-index.js';
import { askedShapes, promptIntent } from '../retrieval/ranked-intent.js';
import { parseQuery } from '../retrieval/ranked-query.js';
import { RANKED_DEFAULTS, type RankedTuning } from '../retrieval/ranked-scan.js';
import { loadTrajectory } from './load.js';
import { defaultEvalSummary } from './retrievers.js';
import type { EvalQuestion } from './types.js';

/** The training schedule (fixed: the procedure, not its output, is what LOSO measures). */
export const TRAIN_SETTINGS = Object.freeze({ iterations: 300, learningRate: 2, l2: 0.001 });

/** The candidates of one question with their labels. */
export interface TrainingItem {
  id: string;
  trajectory: string;
  /** Feature vectors of the candidates that hold the answer (the latest gold turn for evolving values). */
  positives: Float64Array[];
  /** Feature vectors of the other candidates. */
  negatives: Float64Array[];
}

/** Options of {@link collectTraining}. */
export interface CollectOptions {
  questions: readonly EvalQuestion[];
  trajectoriesDir: string;
  tuning?: Partial<RankedTuning>;
  /** Analyses by `trajectory:step`, shared across calls (they depend on the text only). */
  cache?: Map<string, NodeAnalysis>;
}

/**
 * The training data of the ranked scorer: for each question, the scan's own candidates (the same
 * feature computation the scan runs, over the turns folded when it is asked), labelled by the
 * question's gold steps. An "evolving-value" question's positive is its latest gold step only:
 * there the current value is the answer, not an older one.
 *
 * @example
 * const items = collectTraining({ questions, trajectoriesDir: '../shared/data/trajectories' });
 */
export function collectTraining(options: CollectOptions): TrainingItem[] {
  const t: RankedTuning = { ...RANKED_DEFAULTS, ...options.tuning };
  const tokenizer = resolveTokenizer('o200k');
  const cache = options.cache ?? new Map<string, NodeAnalysis>();
  const names = [...new Set(options.questions.map((q) => q.trajectory))].sort(compareCodePoints);
  const out: TrainingItem[] = [];
  for (const name of names) {
    const turns = loadTrajectory(options.trajectoriesDir, name);
    const qs = options.questions
      .filter((q) => q.trajectory === name)
      .sort((a, b) => a.asked_after_step - b.asked_after_step || compareCodePoints(a.id, b.id));
    const index = new RankedIndex();
    let folded = 0;
    for (const q of qs) {
      for (; folded <= q.asked_after_step && folded < turns.length; folded++) {
        const turn = turns[folded]!;
        const key = `${name}:${turn.step_id}`;
        let a = cache.get(key);
        if (!a) {
          const summary = defaultEvalSummary(turn);
          const text = turn.content === '' ? summary : turn.content;
          a = analyzeNode({ summary, text, tokens: tokenizer.count(text) });
          cache.set(key, a);
        }
        index.addAnalysis(turn.step_id, a);
      }
      const query = parseQuery(index, q.question, t);
      const set = candidateFeatures(
        index,
        query.keys,
        promptIntent(q.question),
        askedShapes(q.question),
        t,
      );
      const good = new Set(q.kind === 'evolving-value' ? [q.latest_step] : q.gold_steps);
      const gold = new Set(q.gold_steps);
      const item: TrainingItem = { id: q.id, trajectory: name, positives: [], negatives: [] };
      for (const c of set.candidates) {
        if (good.has(c.stepId)) item.positives.push(c.features);
        else if (!gold.has(c.stepId)) item.negatives.push(c.features);
      }
      out.push(item);
    }
  }
  return out;
}

/**
 * Pairwise logistic regression (RankNet with a linear scorer): minimises, per question, the mean
 * of log(1 + exp(-(w·pos − w·neg))) over its (positive, negative) pairs, questions weighted
 * equally, with a small L2 penalty. Full-batch gradient descent on a fixed schedule from zero:
 * no randomness, so the same items always give the same weights (rounded to 1e-4). Features in
 * `exclude` keep weight 0 (ablations).
 *
 * @example
 * const weights = trainWeights(collectTraining({ questions, trajectoriesDir }));
 */
export function trainWeights(
  items: readonly TrainingItem[],
  options: { exclude?: readonly FeatureName[] } = {},
): FeatureWeights {
  const nf = FEATURE_NAMES.length;
  const fixed = new Set(options.exclude ?? []);
  const usable = items.filter((x) => x.positives.length > 0 && x.negatives.length > 0);
  const w = new Float64Array(nf);
  const { iterations, learningRate, l2 } = TRAIN_SETTINGS;
  const diff = new Float64Array(nf);
  for (let it = 0; it < iterations; it++) {
    const grad = new Float64Array(nf);
    for (const x of usable) {
      const pairs = x.positives.length * x.negatives.length;
      for (const p of x.positives) {
        for (const n of x.negatives) {
          let z = 0;
          for (let i = 0; i < nf; i++) {
            diff[i] = p[i]! - n[i]!;
            z += w[i]! * diff[i]!;
          }
          const g = 1 / (1 + Math.exp(z)) / pairs;
          for (let i = 0; i < nf; i++) grad[i]! -= g * diff[i]!;
        }
      }
    }
    for (let i = 0; i < nf; i++) {
      if (fixed.has(FEATURE_NAMES[i]!)) continue;
      w[i]! -= learningRate * (grad[i]! / Math.max(1, usable.length) + l2 * w[i]!);
    }
  }
  const out: Partial<Record<(typeof FEATURE_NAMES)[number], number>> = {};
  FEATURE_NAMES.forEach((name, i) => {
    out[name] = Math.round(w[i]! * 1e4) / 1e4;
  });
  return Object.freeze(out);
}
