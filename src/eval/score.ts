import { compareCodePoints } from '../protocol/canonical-json.js';
import type {
  EvalQuestion,
  EvalRow,
  EvalSummary,
  GroupSummary,
  LatencySummary,
  ScoredPage,
} from './types.js';

/** Options of {@link scoreQuestion}. */
export interface ScoreOptions {
  question: EvalQuestion;
  /** The verified pages the engine paged in for the question, in page order. */
  pages: readonly ScoredPage[];
  /** Counts tokens of a page's text (o200k in the protocol). */
  count: (text: string) => number;
  /** Measured scan time in milliseconds. */
  scanMs?: number;
}

/**
 * Scores one question (eval/README.md §Protocol 3). A hit needs the answer inside one page's
 * text: an answer split across two pages is not a hit, since no page brought it back.
 *
 * @example
 * scoreQuestion({ question, pages: [{ step_id: 3, content: 'port: 1100' }], count });
 * // → { hit: true, latest_hit: true, pages: 1, tokens: 4, gold_tokens: 4, ... }
 */
export function scoreQuestion(options: ScoreOptions): EvalRow {
  const { question: q, pages, count } = options;
  const gold = new Set(q.gold_steps);
  let hit = false;
  let latestHit = false;
  let tokens = 0;
  let goldTokens = 0;
  for (const p of pages) {
    const n = count(p.content);
    tokens += n;
    if (gold.has(p.step_id)) goldTokens += n;
    if (p.content.includes(q.answer)) {
      hit = true;
      if (p.step_id === q.latest_step) latestHit = true;
    }
  }
  return {
    id: q.id,
    trajectory: q.trajectory,
    kind: q.kind,
    hit,
    latest_hit: latestHit,
    pages: pages.length,
    tokens,
    gold_tokens: goldTokens,
    paged_steps: pages.map((p) => p.step_id),
    scan_ms: options.scanMs ?? 0,
  };
}

/**
 * Nearest-rank percentile of a sample (0 for an empty sample).
 *
 * @example
 * percentile([5, 1, 3, 2, 4], 50); // 3
 */
export function percentile(values: readonly number[], p: number): number {
  if (values.length === 0) return 0;
  const sorted = [...values].sort((a, b) => a - b);
  const rank = Math.max(1, Math.ceil((p / 100) * sorted.length));
  return sorted[Math.min(rank, sorted.length) - 1]!;
}

function latency(rows: readonly EvalRow[]): LatencySummary {
  const ms = rows.map((r) => r.scan_ms);
  return { p50: round(percentile(ms, 50), 3), p99: round(percentile(ms, 99), 3) };
}

function round(x: number, digits: number): number {
  const f = 10 ** digits;
  return Math.round(x * f) / f;
}

const share = (xs: readonly EvalRow[], f: (r: EvalRow) => boolean): number =>
  xs.length === 0 ? 0 : xs.filter(f).length / xs.length;

/** Headline figures of a group of rows. */
export function groupSummary(rows: readonly EvalRow[]): GroupSummary {
  const evolving = rows.filter((r) => r.kind === 'evolving-value');
  const tokens = rows.reduce((s, r) => s + r.tokens, 0);
  const gold = rows.reduce((s, r) => s + r.gold_tokens, 0);
  return {
    questions: rows.length,
    hit_rate: share(rows, (r) => r.hit),
    latest_hit_rate_evolving: evolving.length === 0 ? null : share(evolving, (r) => r.latest_hit),
    token_precision: tokens === 0 ? null : gold / tokens,
    mean_tokens: rows.length === 0 ? 0 : tokens / rows.length,
  };
}

function groupsBy(rows: readonly EvalRow[], key: (r: EvalRow) => string) {
  const names = [...new Set(rows.map(key))].sort(compareCodePoints);
  const out: Record<string, GroupSummary> = {};
  for (const n of names) out[n] = groupSummary(rows.filter((r) => key(r) === n));
  return out;
}

/**
 * The eval summary (eval/README.md §Protocol 4) over per-question rows.
 *
 * @example
 * summarizeRows(rows).hit_rate; // share of questions whose answer was paged in
 */
export function summarizeRows(rows: readonly EvalRow[]): EvalSummary {
  const n = rows.length;
  const evolving = rows.filter((r) => r.kind === 'evolving-value');
  const tokens = rows.reduce((s, r) => s + r.tokens, 0);
  const gold = rows.reduce((s, r) => s + r.gold_tokens, 0);
  const kinds = [...new Set(rows.map((r) => r.kind))].sort(compareCodePoints);
  const byKind: Record<string, number> = {};
  for (const k of kinds) {
    byKind[k] = share(
      rows.filter((r) => r.kind === k),
      (r) => r.hit,
    );
  }
  return {
    questions: n,
    hit_rate: share(rows, (r) => r.hit),
    latest_hit_rate_evolving: evolving.length === 0 ? null : share(evolving, (r) => r.latest_hit),
    mean_pages: n === 0 ? 0 : rows.reduce((s, r) => s + r.pages, 0) / n,
    mean_tokens: n === 0 ? 0 : tokens / n,
    token_precision: tokens === 0 ? null : gold / tokens,
    no_page_rate: share(rows, (r) => r.pages === 0),
    by_kind: byKind,
    scan_latency_ms: latency(rows),
    by_family: groupsBy(rows, (r) => r.family ?? 'other'),
    by_session: groupsBy(rows, (r) => r.trajectory),
  };
}
