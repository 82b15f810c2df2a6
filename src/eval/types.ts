import { z } from 'zod';
import type { ImportedTurn } from '../import/turn.js';

/** Question kinds of the retrieval eval (eval/README.md). */
export const QUESTION_KINDS = [
  'exact-identifier',
  'paraphrase',
  'evolving-value',
  'error-lookup',
  'command-lookup',
  'number-lookup',
] as const;

/** One of {@link QUESTION_KINDS}. */
export type QuestionKind = (typeof QUESTION_KINDS)[number];

const stepId = z.number().int().nonnegative();

/** zod schema of one eval question. */
export const evalQuestionSchema = z
  .object({
    id: z.string().min(1),
    trajectory: z.string().min(1),
    asked_after_step: stepId,
    question: z.string().min(1),
    gold_steps: z.array(stepId).min(1),
    latest_step: stepId,
    answer: z.string().min(1),
    kind: z.enum(QUESTION_KINDS),
  })
  .loose();

/** A question: asked as the user prompt after `asked_after_step`; `answer` is in the gold steps. */
export type EvalQuestion = z.infer<typeof evalQuestionSchema>;

/** zod schema of a questions file: `{ version?, questions: [...] }` or a bare array. */
export const questionsFileSchema = z
  .preprocess(
    (v) => (Array.isArray(v) ? { questions: v } : v),
    z.object({ questions: z.array(evalQuestionSchema) }).loose(),
  )
  .transform((f) => f.questions);

/** A turn of a trajectory (`<name>.jsonl`, one turn a line, `step_id` = its position). */
export type TrajectoryTurn = ImportedTurn;

/** One page as the eval scores it: where it came from and its text. */
export interface ScoredPage {
  step_id: number;
  content: string;
}

/** Per-question result (eval/README.md §Protocol 3). */
export interface EvalRow {
  id: string;
  trajectory: string;
  kind: QuestionKind;
  /** The answer occurs in some paged-in text. */
  hit: boolean;
  /** The answer occurs in text paged in from `latest_step`. */
  latest_hit: boolean;
  pages: number;
  /** o200k tokens of the paged-in text. */
  tokens: number;
  /** Paged-in tokens that came from gold steps. */
  gold_tokens: number;
  /** Steps paged in, in page order. */
  paged_steps: number[];
  /** Wall time of the engine's scan for this prompt, in milliseconds (not deterministic). */
  scan_ms: number;
  /** Session family (agent) of the trajectory, from the data manifest (`other` if unlisted). */
  family?: string;
}

/** Scan latency percentiles in milliseconds (nearest rank). */
export interface LatencySummary {
  p50: number;
  p99: number;
}

/** The headline figures of a group of questions (a session family, a session). */
export interface GroupSummary {
  questions: number;
  hit_rate: number;
  latest_hit_rate_evolving: number | null;
  token_precision: number | null;
  mean_tokens: number;
}

/** The eval summary; names as eval/README.md §Protocol 4, plus scan latency and groups. */
export interface EvalSummary {
  questions: number;
  hit_rate: number;
  /** Over `evolving-value` questions; null when there are none. */
  latest_hit_rate_evolving: number | null;
  mean_pages: number;
  mean_tokens: number;
  /** Sum of gold_tokens over sum of tokens; null when nothing was paged in. */
  token_precision: number | null;
  no_page_rate: number;
  /** Hit rate per kind, keys sorted. Only kinds that occur. */
  by_kind: Record<string, number>;
  scan_latency_ms: LatencySummary;
  /** Headline figures per session family (keys sorted). */
  by_family: Record<string, GroupSummary>;
  /** Headline figures per trajectory (keys sorted). */
  by_session: Record<string, GroupSummary>;
}

/** Result of an eval run. */
export interface EvalResult {
  mode: string;
  summary: EvalSummary;
  rows: EvalRow[];
}
