import { foldToken, identifiersOf } from '../extract/terms.js';
import type { RecallCandidate, RecallResult, RecallStatus } from '../protocol/results.js';
import type { TermIndexReader } from './inverted-index.js';

/** Options of {@link recall}. */
export interface RecallOptions {
  /** Keep at most this many candidates (primary tier first). Default: all, as the reference. */
  limit?: number;
}

/**
 * Explicit recall with coverage tiering and chronological labels (CONF-04), reference-exact
 * (the vectors pin that recall matches the query's identifiers only, not its files or errors):
 * a query term scores 2 if it is in the node's summary terms plus 1 as an indexed term;
 * coverage counts distinct matched terms; the primary tier (maximal coverage) is labelled
 * latest_chronological / superseded / historical by step descending; the rest are `related`.
 *
 * @example
 * recall(index, 'PostgreSQL port').candidates[0]?.status; // 'latest_chronological'
 */
export function recall(
  index: TermIndexReader,
  query: string,
  options: RecallOptions = {},
): RecallResult {
  const terms = identifiersOf(query);
  index.prepare(terms);
  const coverage = index.scratchCounts();
  const touched: number[] = [];
  for (const t of terms) {
    for (const ord of index.postingsOf(t)) {
      if (coverage[ord] === 0) touched.push(ord);
      coverage[ord]! += 1;
    }
  }
  let max = 0;
  for (const ord of touched) if (coverage[ord]! > max) max = coverage[ord]!;
  const byStepDesc = (a: number, b: number) => index.stepAt(b) - index.stepAt(a);
  const primary = touched.filter((o) => coverage[o] === max).sort(byStepDesc);
  const related = touched.filter((o) => coverage[o]! < max).sort(byStepDesc);
  // The score needs the node's summary terms: computed only for the candidates returned.
  const score = (ord: number): number => {
    const summary = index.summaryTermsAt(ord);
    const e = index.entryAt(ord);
    const own = new Set(e.identifiers);
    for (const f of e.files) own.add(foldToken(f));
    for (const x of e.errors) own.add(foldToken(x));
    let sc = 0;
    for (const t of terms) if (own.has(t)) sc += 1 + (summary.has(t) ? 2 : 0);
    return sc;
  };
  const label = (i: number, n: number): RecallStatus => {
    if (i === 0) return 'latest_chronological';
    if (n >= 3 && i < n - 1) return 'superseded';
    return 'historical';
  };
  const limit =
    options.limit !== undefined && options.limit >= 0 ? options.limit : Number.POSITIVE_INFINITY;
  const candidates: RecallCandidate[] = [];
  const make = (ord: number, status: RecallStatus): RecallCandidate => {
    const e = index.entryAt(ord);
    return {
      step_id: e.step_id,
      status,
      coverage: coverage[ord]!,
      score: score(ord),
      summary: e.summary,
      folded_at: e.folded_at,
    };
  };
  for (let i = 0; i < primary.length && candidates.length < limit; i++) {
    candidates.push(make(primary[i]!, label(i, primary.length)));
  }
  for (let i = 0; i < related.length && candidates.length < limit; i++) {
    candidates.push(make(related[i]!, 'related'));
  }
  for (const ord of touched) coverage[ord] = 0;
  return { query, candidates };
}
