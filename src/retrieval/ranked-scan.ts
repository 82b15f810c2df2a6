import { compareCodePoints } from '../protocol/canonical-json.js';
import type { LineRange, RecallStatus, ScanPick, ScanResult } from '../protocol/results.js';
import { FEATURE_NAMES, type FeatureWeights, linearScorer } from './linear-scorer.js';
import type { BlockAnalysis } from './node-analysis.js';
import {
  type Candidate,
  type CandidateSet,
  candidateFeatures,
  type FeatureTuning,
  hasShape,
} from './ranked-features.js';
import { blockCount, localKey, type RankedIndexView } from './ranked-index.js';
import { askedShapes, type PromptIntent, promptIntent } from './ranked-intent.js';
import {
  type DroppedTerm,
  type KeyMatch,
  type ParsedQuery,
  type QueryTuning,
  queryOf,
} from './ranked-query.js';
import { RANKED_WEIGHTS } from './ranked-weights.js';

export type { DroppedTerm, KeyMatch } from './ranked-query.js';

/** Tuning of the ranked scan. Every field has a default ({@link RANKED_DEFAULTS}). */
export interface RankedTuning extends QueryTuning, FeatureTuning {
  /** Weights of the linear scorer (learned: see `ranked-weights.ts`). */
  weights: FeatureWeights;
  /** Softmax temperature that turns scores into the probability each turn is the answer. */
  temperature: number;
  /** A page other than an intent owner needs at least this probability. */
  minProbability: number;
  /** Smallest window a page gets, in tokens (enough for an answer line and its context). */
  minWindow: number;
  /** Smallest window the first intent owner gets, in tokens (its answer may sit far from its keys). */
  minOwnerWindow: number;
  /** Largest page, in tokens. */
  pageTokens: number;
  /** At most this many pages per prompt (companions included). */
  maxPages: number;
  /**
   * A turn is paged only if the keys it holds (with its call) sum to this much rarity (IDF over
   * the IDF of a key found in one turn): a lone common word never selects a turn, while on a
   * store of a few turns, where every key is common, the prompt's own words still do.
   */
  minEvidence: number;
  /** At most this many intent owners (residual cover of the prompt's keys). */
  maxOwners: number;
  /**
   * Another owner is sought while at least this share of the prompt's matched keys is uncovered
   * (counted, not weighed by IDF: on a small store every key is common, and a second intent's
   * keys would weigh next to nothing beside the first's).
   */
  residualShare: number;
  /** Tokens of the companion page (the call turn of a result whose keys came from it). */
  companionTokens: number;
  /**
   * An owner is the latest candidate (the earliest on a "first" prompt) that holds the chosen
   * one's keys and scores within this many logits of it (0: the chosen one, always).
   */
  timeBand: number;
}

/**
 * The defaults (docs/retrieval.md has the measurements behind them). `weights`, `temperature`,
 * `minProbability` and `maxPages` are what `contextfold eval --fit` chose on the public set
 * (their leave-one-session-out figure is in the docs); the rest are fixed by design.
 */
export const RANKED_DEFAULTS: Readonly<RankedTuning> = Object.freeze({
  extendWeight: 0.7,
  stemWeight: 0.6,
  minPrefix: 4,
  maxExtensionGrowth: 7,
  maxExtensions: 8,
  maxQueryKeys: 64,
  k1: 1.2,
  b: 0.75,
  maxPostings: 256,
  maxCandidates: 256,
  weights: RANKED_WEIGHTS,
  temperature: 1,
  minProbability: 0.01,
  minWindow: 60,
  minOwnerWindow: 150,
  pageTokens: 3000,
  maxPages: 10,
  minEvidence: 0.5,
  maxOwners: 4,
  residualShare: 0.25,
  companionTokens: 300,
  timeBand: 1,
});

/** Options of {@link rankedScan}. */
export interface RankedScanOptions {
  /** The per-turn page-in budget, in tokens. */
  perTurnCap: number;
  /** The per-call cap, in tokens. */
  perCallCap: number;
  tuning?: Partial<RankedTuning>;
  /**
   * Turns from this step on are still in the live context (e.g. after a compaction): they are
   * scored with the others but never paged, and a live turn keeps an intent from older turns
   * only when it holds what they hold (see {@link liveOwner}).
   */
  liveFrom?: number;
  /**
   * Steps that only summarise other turns (a compaction summary): never paged, never owners of
   * an intent — a summary is lossy by construction, it is why the archive is paged in.
   */
  lossy?: readonly number[];
}

/** A ranked pick: the engine's `ScanPick` with every ranked field set. */
export interface RankedPick extends ScanPick {
  /** Prompt keys this pick owns (removed from the residual), sorted; empty for other pages. */
  matched_terms: string[];
  /** Tokens this page may take at most (its window size). */
  cost: number;
  /** The linear score (0 for companions). */
  score: number;
  /** Probability this turn holds the answer, among the best candidates (0 for companions). */
  probability: number;
  /** Indexed keys to focus the page window on, heaviest first. */
  focus: KeyMatch[];
  /** Lines of the best-scoring block, `[start, end)`. */
  block: LineRange;
  /** CONF-04 label within its group (owner and alternatives by step); `related` for companions. */
  status: RecallStatus;
}

/** The ranked selection for a prompt, in page order. */
export interface RankedScanResult extends ScanResult {
  /** Prompt words the scan did not search for, and why. */
  dropped_terms: DroppedTerm[];
  intent: PromptIntent;
  selected: RankedPick[];
  /** Intent owners that did not fit the per-turn budget (never replaced by another turn). */
  budget_dropped: RankedPick[];
}

interface Scored {
  c: Candidate;
  s: number;
  p: number;
  evidence: number;
}

const round = (x: number): number => Math.round(x * 1000) / 1000;

function held(c: Candidate, q: number): boolean {
  return c.own[q]! > 0 || c.fromPrev[q]! > 0;
}

const ERR = FEATURE_NAMES.indexOf('err');

/**
 * Candidates that pass the evidence floor, best first (probabilities not set yet). A turn that
 * holds no prompt key itself (only its call does) is a candidate only when it looks like the
 * answer: the asked answer shape, or a failure on a prompt about one.
 */
function scoreAll(set: CandidateSet, t: RankedTuning): Scored[] {
  const out: Scored[] = [];
  const { rarity } = set;
  const score = linearScorer(t.weights);
  // Plain loops: a sum updated inside a callback is boxed, an allocation per key and candidate.
  for (const c of set.candidates) {
    let evidence = 0;
    let own = false;
    for (let q = 0; q < rarity.length; q++) {
      if (held(c, q)) evidence += rarity[q]!;
      if (c.own[q]! > 0) own = true;
    }
    const answerLike = c.features[SHAPE]! > 0 || c.features[ERR]! > 0;
    if (evidence < t.minEvidence || (!own && !answerLike)) continue;
    out.push({ c, s: score(c.features), p: 0, evidence });
  }
  return out.sort((a, b) => b.s - a.s || b.c.stepId - a.c.stepId);
}

/** Softmax over the `maxPages` best (the rest keep probability 0). */
function setProbabilities(pool: readonly Scored[], t: RankedTuning): void {
  const top = pool.slice(0, t.maxPages);
  if (top.length === 0) return;
  const z = top.reduce((sum, x) => sum + Math.exp((x.s - top[0]!.s) / t.temperature), 0);
  for (const x of top) x.p = Math.exp((x.s - top[0]!.s) / t.temperature) / z;
}

/** A page is a version of an owner's fact when it holds this share of the owner's key weight. */
const SAME_FACT_SHARE = 0.75;

/** A key is specific when its rarity is at least this: it names the thing, not the topic. */
const SPECIFIC_RARITY = 0.5;

/**
 * When the prompt asks for a value (an answer shape the archived candidate holds), a live block
 * holds the candidate's answer lines only when it holds this share of the keys of the
 * candidate's best block that are not the prompt's (the values and what surrounds them): a
 * re-run with the same output, not another commit, listing or test run that shares the prompt's
 * words and the shape but not the values.
 */
export const SAME_LINES_SHARE = 0.8;

/**
 * Whether one block of a live turn holds the given prompt keys and, when `shape`, an asked answer
 * shape and the archived candidate's answer lines (see {@link SAME_LINES_SHARE}).
 */
export type BlockTest = (
  live: Candidate,
  keys: readonly number[],
  shape: boolean,
  archived: Candidate,
) => boolean;

/**
 * The live turn that owns an archived candidate's intent, if any: one that holds, in a single
 * block (the lines that would answer), every specific key the candidate holds (or, if the
 * candidate holds no specific key, every key it holds), and, when the candidate has the asked
 * answer shape, that shape and most of the candidate's best block (its answer lines, not just the
 * prompt's words); and scores within `margin` of it (a factor e in probability at temperature
 * 1). Sharing a frequent word, naming the keys far apart, or holding another value of the same
 * shape (a later commit, a newer listing) is never enough.
 */
export function liveOwner(
  a: { c: Candidate; s: number },
  live: readonly { c: Candidate; s: number }[],
  set: CandidateSet,
  margin: number,
  inOneBlock: BlockTest,
): Candidate | undefined {
  const nq = set.rarity.length;
  const keys: number[] = [];
  for (let q = 0; q < nq; q++) if (held(a.c, q) && set.rarity[q]! >= SPECIFIC_RARITY) keys.push(q);
  if (keys.length === 0) for (let q = 0; q < nq; q++) if (held(a.c, q)) keys.push(q);
  const shape = a.c.features[SHAPE]! > 0;
  return live.find(
    (l) =>
      l.s >= a.s - margin && keys.every((q) => held(l.c, q)) && inOneBlock(l.c, keys, shape, a.c),
  )?.c;
}

const SHAPE = FEATURE_NAMES.indexOf('shape');

/** An intent owner and the prompt keys it took from the residual. */
interface Owner {
  x: Scored;
  keys: number[];
}

/**
 * The version of a fact an owner pages: among the candidates that hold every key of `keys` that
 * `x` holds and score within `timeBand` logits of it, the latest (the earliest on a "first"
 * prompt). A smaller or denser older record never takes an intent from a newer one of the same
 * fact (CONF-13: a budget may lose information, never serve an outdated version in its place);
 * a later turn that scores far below (one that names the topic without the value) does not
 * take it either.
 */
function versionOf(
  pool: readonly Scored[],
  x: Scored,
  keys: readonly number[],
  intent: PromptIntent,
  t: RankedTuning,
  taken: (y: Scored) => boolean = () => false,
): Scored {
  if (t.timeBand <= 0) return x;
  const same = pool.filter(
    (y) =>
      y.s >= x.s - t.timeBand && !taken(y) && keys.every((q) => !held(x.c, q) || y.c.own[q]! > 0),
  );
  const later = (a: Scored, b: Scored) =>
    intent.time === 'earliest' ? b.c.stepId < a.c.stepId : b.c.stepId > a.c.stepId;
  return same.reduce((a, b) => (later(a, b) ? b : a), x);
}

/** Intent owners by residual cover: each next owner holds most of what is still uncovered. */
function owners(
  pool: readonly Scored[],
  set: CandidateSet,
  t: RankedTuning,
  intent: PromptIntent,
): Owner[] {
  const nq = set.keyWeights.length;
  const present = new Array<boolean>(nq).fill(false);
  for (const x of pool) for (let q = 0; q < nq; q++) if (held(x.c, q)) present[q] = true;
  const matched = present.filter(Boolean).length;
  const covered = new Array<boolean>(nq).fill(false);
  const out: Owner[] = [];
  const take = (x: Scored) => {
    const keys: number[] = [];
    for (let q = 0; q < nq; q++) {
      if (!held(x.c, q) || covered[q]) continue;
      covered[q] = true;
      keys.push(q);
    }
    out.push({ x, keys });
  };
  const all = Array.from({ length: nq }, (_, q) => q);
  if (pool[0]) take(versionOf(pool, pool[0], all, intent, t));
  while (out.length > 0 && out.length < t.maxOwners) {
    let residual = 0;
    let left = 0;
    for (let q = 0; q < nq; q++) {
      if (!present[q] || covered[q]) continue;
      residual += set.keyWeights[q]!;
      left++;
    }
    if (residual <= 0 || left < t.residualShare * matched) break;
    const next = pool.find((x) => {
      if (out.some((o) => o.x === x)) return false;
      let gain = 0;
      let rare = 0;
      for (let q = 0; q < nq; q++) {
        if (covered[q] || !held(x.c, q)) continue;
        gain += set.keyWeights[q]!;
        rare += set.rarity[q]!;
      }
      return gain >= 0.5 * residual && rare >= t.minEvidence;
    });
    if (!next) break;
    const uncovered = all.filter((q) => !covered[q]);
    take(versionOf(pool, next, uncovered, intent, t, (y) => out.some((o) => o.x === y)));
  }
  return out;
}

function focusOf(c: Candidate, query: ParsedQuery): KeyMatch[] {
  const focus: KeyMatch[] = [];
  query.keys.forEach((_, q) => {
    const key = c.matched[q];
    const w = Math.max(c.own[q]!, c.fromPrev[q]!);
    if (key !== undefined && w > 0) focus.push({ key, weight: round(w) });
  });
  return focus.sort((a, b) => b.weight - a.weight || compareCodePoints(a.key, b.key));
}

/**
 * Ranked scan: every turn that holds a prompt key (or follows one) is scored by a learned linear
 * model over generic features (`ranked-features.ts`); scores become probabilities (softmax).
 * Intent owners are chosen by residual cover as in CONF-13 (the best turn, then the turn that
 * holds most of what is still uncovered, …); a dropped owner's intent is never handed to another
 * turn. With the budget left, the other likely turns are paged too, each with a window sized by
 * its probability (at least `minWindow`), so a confident answer gets a large page and an
 * uncertain one several small ones. Cost: the postings of the prompt's keys and the analyses of
 * at most `maxCandidates` turns, never the whole store.
 *
 * @example
 * const r = rankedScan(index, 'which postgres port?', { perTurnCap: 3500, perCallCap: 3000 });
 * r.selected[0]?.step_id; // the turn that states the port
 * r.dropped_terms; // [{ term: 'which', reason: 'stopword' }]
 */
export function rankedScan(
  index: RankedIndexView,
  prompt: string,
  options: RankedScanOptions,
): RankedScanResult {
  const t: RankedTuning = { ...RANKED_DEFAULTS, ...options.tuning };
  const intent = promptIntent(prompt);
  const query = queryOf(index, prompt, t);
  const result: RankedScanResult = {
    query_terms: query.keys.map((k) => k.term).sort(compareCodePoints),
    dropped_terms: query.dropped,
    ...(query.omitted > 0 ? { dropped_terms_omitted: query.omitted } : {}),
    intent,
    selected: [],
    budget_dropped: [],
  };
  if (query.keys.length === 0) return result;
  // Read once: its cues are case-insensitive patterns over the whole prompt (a pasted log: MBs).
  const asked = askedShapes(prompt);
  const set = candidateFeatures(index, query.keys, intent, asked, t);
  let pool = scoreAll(set, t);
  if (options.lossy && options.lossy.length > 0) {
    const lossy = new Set(options.lossy);
    pool = pool.filter((x) => !lossy.has(x.c.stepId));
  }
  if (options.liveFrom !== undefined) {
    const live = withoutLiveOwned(pool, { index, query, set, t, asked }, options.liveFrom);
    pool = live.pool;
    result.live_owners = live.owners;
  }
  setProbabilities(pool, t);
  if (pool.length === 0) return result;
  const own = owners(pool, set, t, intent);
  const pages = new PageSelection({ index, query, set, t }, own, options, result);
  pages.addOwners();
  pages.addAlternatives(pool);
  pages.label();
  return result;
}

/** What the steps of one scan after scoring read: the index, the prompt's keys, candidates. */
interface ScanContext {
  index: RankedIndexView;
  query: ParsedQuery;
  set: CandidateSet;
  t: RankedTuning;
}

/**
 * The archived candidates (steps before `liveFrom`) whose answer a live turn already holds
 * (see {@link liveOwner}), taken out of the pool; live turns are never paged. Returns the pool
 * left and the live owners' steps, ascending.
 */
function withoutLiveOwned(
  pool: readonly Scored[],
  ctx: ScanContext & { asked: readonly string[] },
  liveFrom: number,
): { pool: Scored[]; owners: number[] } {
  const { index, query, set, t } = ctx;
  const { asked } = ctx;
  const promptKeys = new Set(query.keys.flatMap((k) => k.matches.map((m) => m.key)));
  // The keys of an archived candidate's best block that are not the prompt's (its values),
  // read once per candidate and only when the prompt asks for a value.
  const valueKeys = new Map<number, string[]>();
  const valuesOf = (archived: Candidate): string[] => {
    let v = valueKeys.get(archived.docNo);
    if (!v) {
      const src = index.doc(archived.docNo);
      v = src.blocks[archived.block]!.keys.map((id) => src.keys[id]!);
      v = v.filter((k) => !promptKeys.has(k));
      valueKeys.set(archived.docNo, v);
    }
    return v;
  };
  const inOneBlock: BlockTest = (c, keys, shape, archived) => {
    const doc = index.doc(c.docNo);
    return doc.blocks.some((b) => {
      if (shape && !hasShape(b.shapes, asked)) return false;
      const hasKeys = keys.every((q) =>
        query.keys[q]!.matches.some((m) => blockCount(b, localKey(doc.keys, m.key)) > 0),
      );
      return hasKeys && (!shape || sharesLines(b, doc.keys, valuesOf(archived)));
    });
  };
  const live = pool.filter((x) => x.c.stepId >= liveFrom);
  const owned = new Set<number>();
  const kept = pool.filter((x) => {
    if (x.c.stepId >= liveFrom) return false;
    const o = liveOwner(x, live, set, t.temperature, inOneBlock);
    if (o) owned.add(o.stepId);
    return o === undefined;
  });
  return { pool: kept, owners: [...owned].sort((a, b) => a - b) };
}

/**
 * The pages of one scan, within the per-turn budget: the intent owners first (each with the
 * call turn it took its keys from, as a companion), then the other likely turns, each a window
 * sized by its probability, labelled in its owner's chronology when it is a version of the same
 * fact. A dropped owner's intent is never handed to another turn.
 */
class PageSelection {
  readonly #taken = new Set<number>();
  readonly #groups = new Map<number, RankedPick[]>();
  /** A turn that owns an intent is paged as its owner, never also as another's companion. */
  readonly #ownerSteps: Set<number>;
  readonly #turnCap: number;
  readonly #pageCap: number;
  #consumed = 0;

  constructor(
    private readonly ctx: ScanContext,
    private readonly own: readonly Owner[],
    caps: { perTurnCap: number; perCallCap: number },
    private readonly result: RankedScanResult,
  ) {
    this.#ownerSteps = new Set(own.map((o) => o.x.c.stepId));
    this.#turnCap = caps.perTurnCap;
    this.#pageCap = Math.min(ctx.t.pageTokens, caps.perCallCap, caps.perTurnCap);
  }

  /** Each owner, in order, and its companion; an owner that does not fit is budget-dropped. */
  addOwners(): void {
    for (const { x: o, keys } of this.own) {
      const p = this.#pick(o, undefined, keys);
      this.#taken.add(o.c.stepId);
      if (!this.#admit(p, this.result.selected.length === 0)) {
        this.result.budget_dropped.push(p);
        continue;
      }
      this.#groups.set(o.c.stepId, [p]);
      this.#addCompanion(o, p);
    }
  }

  /** The other likely turns, best first, each joined to the owner it shares most keys with. */
  addAlternatives(pool: readonly Scored[]): void {
    const { set, t } = this.ctx;
    const ownerList = this.own.map((o) => o.x);
    const first = ownerList[0]!;
    for (const x of pool) {
      if (x.p < t.minProbability || this.#taken.has(x.c.stepId)) continue;
      const owner = closestOwner(x, ownerList, set) ?? first;
      if (!this.#groups.has(owner.c.stepId)) continue;
      const p = this.#pick(x, owner);
      if (!this.#admit(p, false)) continue;
      this.#taken.add(x.c.stepId);
      // A version of the same fact (it holds most of the key weight its owner took) is labelled
      // in the owner's chronology; any other page is only related to it.
      const took = this.own.find((o) => o.x === owner)!.keys;
      const mass = took.reduce((sum, q) => sum + set.keyWeights[q]!, 0);
      const shared = took.reduce((sum, q) => sum + (held(x.c, q) ? set.keyWeights[q]! : 0), 0);
      if (shared >= SAME_FACT_SHARE * mass) this.#groups.get(owner.c.stepId)!.push(p);
      else p.status = 'related';
    }
  }

  /** CONF-04 labels within each owner's group. */
  label(): void {
    for (const g of this.#groups.values()) labelChronologically(g);
  }

  #pick(x: Scored, owner: Scored | undefined, keys: readonly number[] = []): RankedPick {
    const { index, query, t } = this.ctx;
    const doc = index.doc(x.c.docNo);
    const blk = doc.blocks[x.c.block]!;
    const floor = x === this.own[0]?.x ? t.minOwnerWindow : t.minWindow;
    const want = Math.max(floor, Math.round(this.#turnCap * x.p));
    const base: RankedPick = {
      step_id: x.c.stepId,
      matched_terms: [],
      cost: Math.min(doc.tokens, this.#pageCap, want),
      score: round(x.s),
      probability: round(x.p),
      focus: focusOf(x.c, query),
      block: { start_line: blk.start, end_line: blk.end },
      status: 'latest_chronological',
    };
    if (owner) base.alternative_of = owner.c.stepId;
    else base.matched_terms = keys.map((q) => query.keys[q]!.term).sort(compareCodePoints);
    return base;
  }

  #admit(p: RankedPick, first: boolean): boolean {
    const room = this.#turnCap - this.#consumed;
    if (!first && room < Math.min(p.cost, this.ctx.t.minWindow)) return false;
    p.cost = first ? p.cost : Math.min(p.cost, room);
    if (this.result.selected.length >= this.ctx.t.maxPages) return false;
    this.result.selected.push(p);
    this.#consumed += p.cost;
    return true;
  }

  /** The call turn of an owner whose keys came mostly from it (a tool result and its call). */
  #addCompanion(o: Scored, p: RankedPick): void {
    const { index, set, t } = this.ctx;
    const prev = o.c.stepId - 1;
    const docNo = index.docOf(prev);
    if (docNo === undefined || this.#taken.has(prev) || this.#ownerSteps.has(prev)) return;
    const fromCall = set.keyWeights.reduce(
      (s, w, q) => s + (o.c.own[q] === 0 && o.c.fromPrev[q]! > 0 ? w : 0),
      0,
    );
    const mine = set.keyWeights.reduce((s, w, q) => s + (o.c.own[q]! > 0 ? w : 0), 0);
    if (fromCall <= 0 || fromCall < 0.5 * mine) return;
    const prevDoc = index.doc(docNo);
    const blk = prevDoc.blocks[prevDoc.blocks.length - 1]!;
    const c: RankedPick = {
      step_id: prev,
      matched_terms: [],
      cost: Math.min(prevDoc.tokens, t.companionTokens, this.#pageCap),
      score: 0,
      probability: 0,
      focus: p.focus,
      block: { start_line: blk.start, end_line: blk.end },
      companion_of: o.c.stepId,
      status: 'related',
    };
    if (this.#admit(c, false)) this.#taken.add(prev);
  }
}

/** Whether block `b` (ids local to `keys`) holds {@link SAME_LINES_SHARE} of the keys `lines`. */
function sharesLines(b: BlockAnalysis, keys: readonly string[], lines: readonly string[]): boolean {
  if (lines.length === 0) return true;
  let n = 0;
  for (const k of lines) if (blockCount(b, localKey(keys, k)) > 0) n++;
  return n >= SAME_LINES_SHARE * lines.length;
}

/** The owner an alternative shares the most prompt keys with (ties: the earlier owner). */
function closestOwner(x: Scored, own: readonly Scored[], set: CandidateSet): Scored | undefined {
  let best: Scored | undefined;
  let bestShare = 0;
  for (const o of own) {
    let share = 0;
    set.keyWeights.forEach((w, q) => {
      if (held(x.c, q) && held(o.c, q)) share += w;
    });
    if (share > bestShare) {
      best = o;
      bestShare = share;
    }
  }
  return best;
}

/** CONF-04 labels by step descending: latest_chronological, superseded…, historical. */
function labelChronologically(group: RankedPick[]): void {
  const byStep = [...group].sort((a, b) => b.step_id - a.step_id);
  byStep.forEach((p, i) => {
    p.status =
      i === 0 ? 'latest_chronological' : i === byStep.length - 1 ? 'historical' : 'superseded';
  });
}
