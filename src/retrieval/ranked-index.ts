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
  /** The packed form a scan scores with, once built (see {@link docLayout}). */
  layout: DocLayout | undefined;
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
  /** The step of document `docNo` (`doc(docNo).stepId`, without reading the document). */
  stepOf(docNo: number): number;
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

  stepOf(docNo: number): number {
    return this.doc(docNo).stepId;
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
    layout: undefined,
  };
}

/**
 * The hash a {@link DocLayout} files a key under (FNV-1a over UTF-16 units): a scan hashes each
 * of its keys once, then finds it in any document with one probe.
 */
export function keyHash(key: string): number {
  let h = 0x811c9dc5;
  for (let i = 0; i < key.length; i++) h = Math.imul(h ^ key.charCodeAt(i), 0x01000193);
  return h;
}

/** Reads and writes a float as two integers of a layout (bit for bit). */
const FLOAT = new Float64Array(1);
const FLOAT_INTS = new Int32Array(FLOAT.buffer);

/** Integers per block in a layout: length, shapes, error, prose (a float in two). */
const BLOCK_INTS = 5;

/**
 * A hash table entry of a layout is the local id + 1 in its low {@link ID_BITS} bits and the top
 * bits of the key's hash above them (a probe skips most other keys without reading them).
 */
const ID_BITS = 20;
const ID_MASK = (1 << ID_BITS) - 1;

/**
 * A document's keys and blocks packed into one integer array, so that scoring a candidate reads
 * a few cache lines of it instead of chasing a block object, two arrays and a binary search of
 * key strings per block (on a large store the decoded analyses are spread over a heap far larger
 * than the cache, and those reads were most of a warm scan). Built once per document.
 *
 * `ints` holds, in order: per local id the start of its run of (block, count) pairs (`keys + 1`
 * offsets into `ints`); a bit per key, set when the header holds it; per block its length,
 * answer shapes, error flag and prose share; the pairs; and a hash table of the keys (`mask + 1`
 * entries, see {@link ID_BITS}; 0 empty; linear probing).
 */
export class DocLayout {
  readonly ints: Int32Array;
  /** Hash table size minus one (a power of two minus one). */
  readonly mask: number;
  /** The hash bits an entry keeps (none for a document of 2^20 keys or more). */
  readonly tagMask: number;
  /** Offsets of the header bits, the block records and the hash table in `ints`. */
  readonly headBits: number;
  readonly blockInfo: number;
  readonly table: number;
  /** Number of blocks. */
  readonly blocks: number;
  /** The document's answer shapes and prose share (see {@link RankedDoc}). */
  readonly shapes: number;
  readonly prose: number;
  /** The document's key list (the table checks a probed key against it). */
  readonly keys: readonly string[];

  constructor(doc: Pick<RankedDoc, 'keys' | 'head' | 'blocks' | 'shapes' | 'prose'>) {
    const { keys, blocks } = doc;
    const n = keys.length;
    let slots = 8;
    while (slots < n + (n >> 1)) slots *= 2;
    let pairs = 0;
    for (const b of blocks) pairs += b.keys.length;
    this.mask = slots - 1;
    this.tagMask = n < ID_MASK ? ~ID_MASK : 0;
    this.headBits = n + 1;
    this.blockInfo = this.headBits + ((n + 31) >> 5);
    const pairsAt = this.blockInfo + BLOCK_INTS * blocks.length;
    this.table = pairsAt + 2 * pairs;
    this.blocks = blocks.length;
    this.shapes = doc.shapes;
    this.prose = doc.prose;
    this.keys = keys;
    this.ints = new Int32Array(this.table + slots);
    this.#fillPairs(doc, pairsAt);
    this.#fillTable();
    for (const id of doc.head) this.ints[this.headBits + (id >> 5)]! |= 1 << (id & 31);
  }

  /** Key starts (a counting pass), the pairs of each key in block order, the block records. */
  #fillPairs(doc: Pick<RankedDoc, 'keys' | 'blocks'>, pairsAt: number): void {
    const { ints } = this;
    const n = doc.keys.length;
    for (const b of doc.blocks) for (const id of b.keys) ints[id + 1]!++;
    ints[0] = pairsAt;
    for (let id = 0; id < n; id++) ints[id + 1] = ints[id]! + 2 * ints[id + 1]!;
    const fill = Int32Array.from(ints.subarray(0, n));
    doc.blocks.forEach((b, bi) => {
      const at = this.blockInfo + BLOCK_INTS * bi;
      ints[at] = b.length;
      ints[at + 1] = b.shapes;
      ints[at + 2] = b.error ? 1 : 0;
      FLOAT[0] = b.prose;
      ints[at + 3] = FLOAT_INTS[0]!;
      ints[at + 4] = FLOAT_INTS[1]!;
      for (let i = 0; i < b.keys.length; i++) {
        const p = fill[b.keys[i]!]!;
        fill[b.keys[i]!] = p + 2;
        ints[p] = bi;
        ints[p + 1] = b.counts[i]!;
      }
    });
  }

  #fillTable(): void {
    const { ints, mask, tagMask, keys, table } = this;
    for (let id = 0; id < keys.length; id++) {
      const h = keyHash(keys[id]!);
      let j = h & mask;
      while (ints[table + j] !== 0) j = (j + 1) & mask;
      ints[table + j] = (h & tagMask) | (id + 1);
    }
  }

  /** The local id of `key` (whose {@link keyHash} is `hash`), or -1: what {@link localKey} finds. */
  find(key: string, hash: number): number {
    const { ints, mask, tagMask, keys, table } = this;
    const tag = hash & tagMask;
    for (let j = hash & mask; ; j = (j + 1) & mask) {
      const e = ints[table + j]!;
      if (e === 0) return -1;
      const id = (e & ~tagMask) - 1;
      if ((e & tagMask) === tag && keys[id] === key) return id;
    }
  }

  /** Whether the header holds local key `id`. */
  inHead(id: number): boolean {
    return (this.ints[this.headBits + (id >> 5)]! & (1 << (id & 31))) !== 0;
  }

  /** Block `bi`'s length, answer shapes, error flag and prose share. */
  blockLength(bi: number): number {
    return this.ints[this.blockInfo + BLOCK_INTS * bi]!;
  }
  blockShapes(bi: number): number {
    return this.ints[this.blockInfo + BLOCK_INTS * bi + 1]!;
  }
  blockError(bi: number): boolean {
    return this.ints[this.blockInfo + BLOCK_INTS * bi + 2] !== 0;
  }
  blockProse(bi: number): number {
    FLOAT_INTS[0] = this.ints[this.blockInfo + BLOCK_INTS * bi + 3]!;
    FLOAT_INTS[1] = this.ints[this.blockInfo + BLOCK_INTS * bi + 4]!;
    return FLOAT[0]!;
  }
}

/** The layout of a document, built on first use and kept with it. */
export function docLayout(doc: RankedDoc): DocLayout {
  let layout = doc.layout;
  if (layout === undefined) {
    layout = new DocLayout(doc);
    doc.layout = layout;
  }
  return layout;
}
