import { compareCodePoints } from '../protocol/canonical-json.js';
import { analyzeNode, type BlockAnalysis, type NodeAnalysis } from './node-analysis.js';

/** One folded turn as the ranked index sees it (text in hand). */
export interface RankedDocInput {
  stepId: number;
  /** The turn's summary (indexed with the payload). */
  summary: string;
  /** The payload text (for non-UTF-8 payloads, its lossy decoding). */
  content: string;
  /** Tokens of the whole payload, in the engine's tokenizer. */
  tokens: number;
}

/** Per-turn statistics and its analysis (kept by reference: inserting a turn copies nothing). */
export interface RankedDoc {
  stepId: number;
  /** Number of keys with repeats. */
  length: number;
  tokens: number;
  error: boolean;
  prose: number;
  /** Answer-shape bit mask of the whole payload. */
  shapes: number;
  /** The turn's distinct keys, sorted by code point (local key ids index this list). */
  keys: readonly string[];
  /** Local ids of the header keys, increasing. */
  head: readonly number[];
  blocks: readonly BlockAnalysis[];
}

/** Postings of one key: parallel arrays of document numbers and term frequencies (fold order). */
export interface Postings {
  docs: number[];
  tfs: number[];
}

/** Keys are bucketed by their first few characters for prefix expansion without a vocab scan. */
export const PREFIX_BUCKET = 4;

/**
 * The read side a ranked scan needs from an index: collection statistics, the postings of the
 * prompt's keys, and the per-turn analyses of the candidates. {@link RankedIndex} implements it
 * in memory; a persistent index can implement the same interface.
 */
export interface RankedIndexView {
  /** Number of indexed turns. */
  readonly size: number;
  /** Mean block length in keys (1 when empty). */
  readonly averageBlockLength: number;
  /** Largest indexed step id (-1 when empty). */
  readonly lastStep: number;
  docFrequency(key: string): number;
  postings(key: string): Postings | undefined;
  doc(docNo: number): RankedDoc;
  docOf(stepId: number): number | undefined;
  /** Indexed keys that start with `prefix` and are longer than it (unordered). */
  extensions(prefix: string): string[];
  /**
   * Optional, for a large persistent index: the `limit` keys of {@link extensions} with at most
   * `maxLength` code points, most frequent first (ties in code-point order), so a query does not
   * read every extension of a common prefix.
   */
  topExtensions?(prefix: string, maxLength: number, limit: number): string[];
  /** A zeroed per-document scratch array (callers zero what they set before returning). */
  scratchSlots(): Int32Array;
}

/**
 * The in-memory index of the ranked page-in: postings per retrieval key, each turn's analysis
 * (by reference), and a prefix table. Adding a turn costs O(its keys); a scan touches only the
 * postings of the prompt's keys and the analyses of their candidate turns.
 *
 * @example
 * const index = new RankedIndex();
 * index.add({ stepId: 37, summary: 'tool: psql', content: 'port 5433', tokens: 3 });
 * index.docFrequency('5433'); // 1
 */
export class RankedIndex implements RankedIndexView {
  readonly #docs: RankedDoc[] = [];
  readonly #byStep = new Map<number, number>();
  readonly #postings = new Map<string, Postings & { key: string }>();
  readonly #buckets = new Map<string, string[]>();
  #blockLength = 0;
  #blocks = 0;
  #lastStep = -1;
  #scratch = new Int32Array(0);

  get size(): number {
    return this.#docs.length;
  }

  get averageBlockLength(): number {
    return this.#blocks === 0 ? 1 : Math.max(1, this.#blockLength / this.#blocks);
  }

  get lastStep(): number {
    return this.#lastStep;
  }

  has(stepId: number): boolean {
    return this.#byStep.has(stepId);
  }

  /** Analyses and adds a turn. Adding a step that is already indexed is a no-op. */
  add(input: RankedDocInput): void {
    if (this.#byStep.has(input.stepId)) return;
    this.addAnalysis(
      input.stepId,
      analyzeNode({ summary: input.summary, text: input.content, tokens: input.tokens }),
    );
  }

  #postingsFor(key: string): [string, Postings] {
    const known = this.#postings.get(key);
    if (known) return [known.key, known];
    const p = { key, docs: [], tfs: [] };
    this.#postings.set(key, p);
    if (key.length >= PREFIX_BUCKET) {
      const b = key.slice(0, PREFIX_BUCKET);
      const bucket = this.#buckets.get(b);
      if (bucket) bucket.push(key);
      else this.#buckets.set(b, [key]);
    }
    return [key, p];
  }

  /**
   * Inserts an analysed turn (see `analyzeNode`); a no-op for a step already indexed.
   *
   * @example
   * index.addAnalysis(37, analyzeNode({ summary: 'tool: psql', text: 'port 5433', tokens: 3 }));
   */
  addAnalysis(stepId: number, a: NodeAnalysis): void {
    if (this.#byStep.has(stepId)) return;
    const docNo = this.#docs.length;
    // Keys are kept as the index's own string instances: one copy of each key in memory.
    const keys = new Array<string>(a.keys.length);
    for (let i = 0; i < a.keys.length; i++) {
      const [key, p] = this.#postingsFor(a.keys[i]!);
      keys[i] = key;
      p.docs.push(docNo);
      p.tfs.push(a.counts[i]!);
    }
    for (const b of a.blocks) this.#blockLength += b.length;
    this.#blocks += a.blocks.length;
    this.#docs.push(rankedDoc(stepId, a, keys));
    this.#byStep.set(stepId, docNo);
    if (stepId > this.#lastStep) this.#lastStep = stepId;
  }

  doc(docNo: number): RankedDoc {
    const d = this.#docs[docNo];
    if (!d) throw new RangeError(`no ranked document ${docNo}`);
    return d;
  }

  docOf(stepId: number): number | undefined {
    return this.#byStep.get(stepId);
  }

  postings(key: string): Postings | undefined {
    return this.#postings.get(key);
  }

  docFrequency(key: string): number {
    return this.postings(key)?.docs.length ?? 0;
  }

  scratchSlots(): Int32Array {
    if (this.#scratch.length < this.#docs.length) {
      this.#scratch = new Int32Array(Math.max(1024, this.#docs.length * 2));
    }
    return this.#scratch;
  }

  extensions(prefix: string): string[] {
    if (prefix.length < PREFIX_BUCKET) return [];
    const bucket = this.#buckets.get(prefix.slice(0, PREFIX_BUCKET)) ?? [];
    return bucket.filter((k) => k.length > prefix.length && k.startsWith(prefix));
  }
}

/** A UTF-16 unit at or above U+D800 (a surrogate, or a unit that sorts after one natively). */
const HIGH_UNIT = /[\uD800-\uFFFF]/;

/** Whether `key` holds no UTF-16 unit at or above U+D800 (see {@link localKey}). */
export const isPlainKey = (key: string): boolean => !HIGH_UNIT.test(key);

/**
 * The local id of `key` in a turn's sorted key list, or -1 (binary search, code-point order).
 * When `key` holds no unit at or above U+D800, the native comparison of `key` with any string
 * agrees with code-point order (at the first differing unit, `key`'s is a BMP character below
 * every surrogate), so the search skips the code-point comparison. A caller that looks the same
 * key up in many lists passes `plain` ({@link isPlainKey}) once.
 */
export function localKey(
  keys: readonly string[],
  key: string,
  plain: boolean = isPlainKey(key),
): number {
  let lo = 0;
  let hi = keys.length;
  if (plain) {
    while (lo < hi) {
      const mid = (lo + hi) >> 1;
      const k = keys[mid]!;
      if (k === key) return mid;
      if (k < key) lo = mid + 1;
      else hi = mid;
    }
    return -1;
  }
  while (lo < hi) {
    const mid = (lo + hi) >> 1;
    const c = compareCodePoints(keys[mid]!, key);
    if (c === 0) return mid;
    if (c < 0) lo = mid + 1;
    else hi = mid;
  }
  return -1;
}

/** True when an increasing id list holds `id` (binary search). */
export function hasId(ids: readonly number[], id: number): boolean {
  let lo = 0;
  let hi = ids.length;
  while (lo < hi) {
    const mid = (lo + hi) >> 1;
    const v = ids[mid]!;
    if (v === id) return true;
    if (v < id) lo = mid + 1;
    else hi = mid;
  }
  return false;
}

/** Term frequency of local key `id` in a block (0 when absent). */
export function blockCount(block: BlockAnalysis, id: number): number {
  let lo = 0;
  let hi = block.keys.length;
  while (lo < hi) {
    const mid = (lo + hi) >> 1;
    const v = block.keys[mid]!;
    if (v === id) return block.counts[mid]!;
    if (v < id) lo = mid + 1;
    else hi = mid;
  }
  return 0;
}

/**
 * The ranked document of an analysed step: the analysis kept by reference, with `keys` given
 * when the caller holds its own (interned) copies of them.
 *
 * @example
 * rankedDoc(37, analyzeNode({ summary: 'tool: psql', text: 'port 5433', tokens: 3 })).stepId; // 37
 */
export function rankedDoc(
  stepId: number,
  a: NodeAnalysis,
  keys: readonly string[] = a.keys,
): RankedDoc {
  return {
    stepId,
    length: a.length,
    tokens: a.tokens,
    error: a.error,
    prose: a.prose,
    shapes: a.shapes,
    keys,
    head: a.head,
    blocks: a.blocks,
  };
}
