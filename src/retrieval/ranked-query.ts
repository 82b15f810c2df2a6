import { foldToken } from '../extract/fold-token.js';
import { compareCodePoints } from '../protocol/canonical-json.js';
import type { DroppedTerm, DropReason, KeyMatch } from '../protocol/results.js';
import type { RankedIndexView } from './ranked-index.js';
import { EARLIEST_CUES, LATEST_CUES } from './ranked-intent.js';
import { distinctRankedTerms, MAX_KEY_LENGTH, RANKED_STOPWORDS, stemWord } from './ranked-terms.js';

/** How prompt words are matched to indexed keys. */
export interface QueryTuning {
  /** Weight of an indexed key that extends a prompt key (`postgres` → `postgresql`). */
  extendWeight: number;
  /** Weight of an indexed key that is a prefix of a prompt key (`configuration` → `config`). */
  stemWeight: number;
  /** Shortest prompt key that is expanded by prefix. */
  minPrefix: number;
  /** An extension may add at most this many characters. */
  maxExtensionGrowth: number;
  /** At most this many extensions per prompt key (most frequent first). */
  maxExtensions: number;
  /**
   * At most this many prompt keys are searched for, the rarest in the store first: a scan's work
   * and memory grow with its keys times their postings, and a pasted log of 40 KB holds
   * thousands. The others are reported as dropped (`key-limit`).
   */
  maxQueryKeys: number;
}

export type { KeyMatch } from '../protocol/results.js';

/** A prompt key and the indexed keys it matches (never empty). */
export interface QueryKey {
  term: string;
  matches: KeyMatch[];
}

export type { DroppedTerm, DropReason } from '../protocol/results.js';

/**
 * Dropped prompt words a scan lists at most: a pasted log of 1.5 MB drops some 24,000 (1.2 MB of
 * JSON in every scan result); the others are only counted.
 */
export const MAX_DROPPED_TERMS = 100;

/** The prompt as the scan reads it. */
export interface ParsedQuery {
  keys: QueryKey[];
  /** The first {@link MAX_DROPPED_TERMS} prompt words not searched for, with the reason. */
  dropped: DroppedTerm[];
  /** Words not searched for beyond those listed in `dropped`. */
  omitted: number;
}

const WORD_KEY = /^[\p{L}\p{N}]+$/u;
const WORD = /[\p{L}\p{N}_]+/gu;
const CUES = new Set([...LATEST_CUES, ...EARLIEST_CUES]);
const CUE_STEMS = new Set([...CUES].map(stemWord));

/** The `maxExtensions` most frequent word keys that extend `term` by at most the allowed growth. */
function mostFrequentExtensions(index: RankedIndexView, term: string, t: QueryTuning): string[] {
  const maxLength = term.length + t.maxExtensionGrowth;
  const usable = (k: string) => k.length <= maxLength && WORD_KEY.test(k);
  if (t.maxExtensions <= 0) return [];
  if (!index.topExtensions) {
    return index
      .extensions(term)
      .filter(usable)
      .sort((a, b) => index.docFrequency(b) - index.docFrequency(a) || compareCodePoints(a, b))
      .slice(0, t.maxExtensions);
  }
  // Most frequent first: read more only while keys that are not words fill the answer.
  for (let limit = 4 * t.maxExtensions; ; limit *= 8) {
    const top = index.topExtensions(term, maxLength, limit);
    const ok = top.filter(usable);
    if (ok.length >= t.maxExtensions || top.length < limit) return ok.slice(0, t.maxExtensions);
  }
}

/** True when {@link expansions} looks for keys that extend `term` or that it extends. */
function expandable(term: string, t: QueryTuning): boolean {
  return term.length >= t.minPrefix && WORD_KEY.test(term) && /\p{L}/u.test(term);
}

/**
 * Reads at once the frequencies a parse asks for (a persistent index then answers tens of
 * thousands of keys of a pasted log in one query, not one each): the terms, and every shorter
 * key {@link expansions} may try for them.
 */
function knowFrequencies(index: RankedIndexView, terms: readonly string[], t: QueryTuning): void {
  if (!index.knowFrequencies) return;
  const keys = [...terms];
  for (const term of terms) {
    if (!expandable(term, t)) continue;
    for (let n = term.length - 1; n >= t.minPrefix; n--) keys.push(term.slice(0, n));
  }
  index.knowFrequencies(keys);
}

/** Reads at once the first answer {@link mostFrequentExtensions} asks for each term. */
function knowExtensions(index: RankedIndexView, terms: readonly string[], t: QueryTuning): void {
  if (!index.knowExtensions || !index.topExtensions || t.maxExtensions <= 0) return;
  const asks = terms
    .filter((term) => !CUE_STEMS.has(term) && expandable(term, t))
    .map((prefix) => ({ prefix, maxLength: prefix.length + t.maxExtensionGrowth }));
  index.knowExtensions(asks, 4 * t.maxExtensions);
}

function expansions(index: RankedIndexView, term: string, t: QueryTuning): KeyMatch[] {
  const out: KeyMatch[] = [];
  if (!expandable(term, t)) return out;
  for (const key of mostFrequentExtensions(index, term, t)) {
    out.push({ key, weight: t.extendWeight });
  }
  // The longest shorter indexed key the prompt key extends: `configuration` meets `config`.
  for (let n = term.length - 1; n >= t.minPrefix; n--) {
    const key = term.slice(0, n);
    if (index.docFrequency(key) > 0) {
      out.push({ key, weight: t.stemWeight });
      break;
    }
  }
  return out;
}

/**
 * Reads a prompt: its retrieval keys with their matches in the index (the key itself, longer
 * keys it is a prefix of, the longest indexed prefix of it), and every word that is not searched
 * for with the reason. No key is dropped for being common: a common key simply weighs little
 * (its IDF), so even a one-turn store answers every word it holds.
 *
 * @example
 * parseQuery(index, 'What port is PostgreSQL on now?', tuning);
 * // keys: port, postgresql; dropped: what/is/on (stopword), now (time-cue)
 */
export function parseQuery(index: RankedIndexView, prompt: string, t: QueryTuning): ParsedQuery {
  const dropped: DroppedTerm[] = [];
  let omitted = 0;
  const seen = new Set<string>();
  const drop = (term: string, reason: DropReason) => {
    if (seen.has(term)) return;
    seen.add(term);
    if (dropped.length < MAX_DROPPED_TERMS) dropped.push({ term, reason });
    else omitted++;
  };
  // A repeated word folds to the same term, which `drop` already ignores: read each word once.
  const read = new Set<string>();
  for (const m of prompt.matchAll(WORD)) {
    if (read.has(m[0])) continue;
    read.add(m[0]);
    const w = foldToken(m[0]);
    if (CUES.has(w)) drop(w, 'time-cue');
    else if (RANKED_STOPWORDS.has(w)) drop(w, 'stopword');
    else if (w.length > MAX_KEY_LENGTH) drop(`${w.slice(0, 24)}…`, 'too-long');
  }
  const keys: QueryKey[] = [];
  const terms = distinctRankedTerms(prompt);
  knowFrequencies(index, terms, t);
  knowExtensions(index, terms, t);
  for (const term of terms) {
    if (CUE_STEMS.has(term)) {
      drop(term, 'time-cue');
      continue;
    }
    const matches: KeyMatch[] = [];
    if (index.docFrequency(term) > 0) matches.push({ key: term, weight: 1 });
    matches.push(...expansions(index, term, t));
    if (matches.length > 0) keys.push({ term, matches });
    else drop(term, 'not-in-store');
  }
  // The extensions found: their frequencies weigh the keys (here and in the scan).
  index.knowFrequencies?.(keys.flatMap((k) => k.matches.map((m) => m.key)));
  const kept = rarestKeys(index, keys, t.maxQueryKeys);
  if (kept.length < keys.length) {
    const keep = new Set(kept);
    for (const k of keys) if (!keep.has(k)) drop(k.term, 'key-limit');
  }
  return { keys: kept, dropped, omitted };
}

/** A query parsed for one view (see {@link rememberQuery}). */
interface ParsedFor {
  prompt: string;
  tuning: QueryTuning;
  query: ParsedQuery;
}

/** The query each view was built for, by view (a view lives for one scan). */
const parsedByView = new WeakMap<RankedIndexView, ParsedFor>();

/** The tuning fields {@link parseQuery} reads. */
const QUERY_TUNING: readonly (keyof QueryTuning)[] = [
  'extendWeight',
  'stemWeight',
  'minPrefix',
  'maxExtensionGrowth',
  'maxExtensions',
  'maxQueryKeys',
];

/**
 * Records that `query` is `parseQuery(view, prompt, tuning)`: a view built for one prompt parses
 * it to know which postings to read, and the scan over the view then reads the same query
 * instead of parsing the prompt again (the statistics a parse reads are the view's).
 */
export function rememberQuery(
  view: RankedIndexView,
  prompt: string,
  tuning: QueryTuning,
  query: ParsedQuery,
): void {
  parsedByView.set(view, { prompt, tuning, query });
}

/**
 * {@link parseQuery}, or the query {@link rememberQuery} recorded for this view, prompt and the
 * same query tuning.
 *
 * @example
 * const query = queryOf(view, 'What port is PostgreSQL on now?', tuning);
 */
export function queryOf(index: RankedIndexView, prompt: string, t: QueryTuning): ParsedQuery {
  const known = parsedByView.get(index);
  if (known && known.prompt === prompt && QUERY_TUNING.every((f) => known.tuning[f] === t[f])) {
    return known.query;
  }
  return parseQuery(index, prompt, t);
}

/** BM25's IDF (always positive). */
export function idf(n: number, df: number): number {
  return Math.log(1 + (n - df + 0.5) / (df + 0.5));
}

/**
 * The most credit a turn can get from a prompt key: weight × IDF of its best match in the store.
 *
 * @example
 * keyCredit(index, { term: 'postgres', matches: [{ key: 'postgresql', weight: 0.7 }] });
 */
export function keyCredit(index: RankedIndexView, q: QueryKey): number {
  let best = 0;
  for (const m of q.matches)
    best = Math.max(best, m.weight * idf(index.size, index.docFrequency(m.key)));
  return best;
}

/**
 * The `limit` keys with the most credit a turn can get from them (weight × IDF of the best
 * match: the rarest), ties by term in code-point order, in the prompt's order; all of them when
 * there are no more than `limit`.
 */
function rarestKeys(index: RankedIndexView, keys: QueryKey[], limit: number): QueryKey[] {
  if (keys.length <= limit) return keys;
  const credit = new Map<QueryKey, number>();
  for (const k of keys) credit.set(k, keyCredit(index, k));
  const ranked = [...keys].sort(
    (a, b) => credit.get(b)! - credit.get(a)! || compareCodePoints(a.term, b.term),
  );
  const keep = new Set(ranked.slice(0, limit));
  return keys.filter((k) => keep.has(k));
}
