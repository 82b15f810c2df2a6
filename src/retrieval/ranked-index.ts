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
  /** Scored once without a layout (see {@link scoringLayout}): the next scoring builds it. */
  scoredOnce: boolean;
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
  /**
   * Optional, for a persistent index: reads the document frequencies of these keys at once (one
   * query), before a query asks for them one by one.
   */
  knowFrequencies?(keys: readonly string[]): void;
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
  /**
   * Optional: says that {@link topExtensions} is about to be asked for these prefixes with this
   * `limit`, so that a persistent index reads them together rather than one each.
   */
  knowExtensions?(asks: readonly { prefix: string; maxLength: number }[], limit: number): void;
  /** A zeroed per-document scratch array (callers zero what they set before returning). */
  scratchSlots(): Int32Array;
  /**
   * Optional: says that a scan is about to score these documents in full, so that a persistent
   * index reads their analyses in one query rather than one each.
   */
  prefetch?(docNos: readonly number[]): void;
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
    scoredOnce: false,
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

/** Key numbers handed out at most before the numbering starts over (see {@link KeyNumbers}). */
const MAX_KEY_NUMBERS = 1 << 19;

/** Prompt keys whose numbers {@link KeyNumbers.ofPromptKey} keeps at hand at most. */
const MAX_RECENT_KEYS = 4096;

/**
 * A number per distinct key in the layouts of this process and the prompts scored against them,
 * so that a layout's probe compares two integers where it compared the probed key with the
 * document's key (reading the document's key list and the key's characters, two cache misses
 * per prompt key and candidate). Equal numbers are equal keys. Past {@link MAX_KEY_NUMBERS}
 * keys the numbering starts over, only between scans ({@link KeyNumbers.trim}): a layout of an
 * earlier epoch is rebuilt on its next use.
 */
export class KeyNumbers {
  #numbers = new Map<string, number>();
  /**
   * The numbers of the keys recent scans asked for ({@link ofPromptKey}), bounded: the whole
   * numbering holds hundreds of thousands of keys, and a lookup there misses the caches several
   * times (about a microsecond each, some 30 per scan). Emptied with the numbering.
   */
  #recent = new Map<string, number>();
  #epoch = 0;

  /** The current numbering; a layout numbered in another one is stale. */
  get epoch(): number {
    return this.#epoch;
  }

  /** The number of `key` (a new one for a key not seen in this epoch). */
  of(key: string): number {
    let n = this.#numbers.get(key);
    if (n === undefined) {
      n = this.#numbers.size;
      this.#numbers.set(key, n);
    }
    return n;
  }

  /**
   * {@link of} for a prompt's key: the same number, found first among the keys recent scans
   * asked for (a layout numbers every key of its document through {@link of}, not through here).
   */
  ofPromptKey(key: string): number {
    let n = this.#recent.get(key);
    if (n === undefined) {
      n = this.of(key);
      if (this.#recent.size >= MAX_RECENT_KEYS) this.#recent.clear();
      this.#recent.set(key, n);
    }
    return n;
  }

  /** Starts a new epoch if the numbering is full. Never during a scan: it voids every number. */
  trim(): void {
    if (this.#numbers.size < MAX_KEY_NUMBERS) return;
    this.#numbers = new Map();
    this.#recent = new Map();
    this.#epoch++;
  }
}

/** The key numbers of this process's layouts. */
export const keyNumbers = new KeyNumbers();

/** The header flag of a key's table entry (the sign bit of its run offset). */
const IN_HEAD = 1 << 31;
/** A key's run offset when no block holds it (a key of the header only). */
const NO_RUN = 0x7fffffff;

/**
 * A document's keys and blocks packed into one integer array, so that scoring a candidate reads
 * a few cache lines of it instead of chasing a block object, two arrays and a binary search of
 * key strings per block (on a large store the decoded analyses are spread over a heap far larger
 * than the cache, and those reads were most of a warm scan). Built once per document.
 *
 * `ints` holds, in order: a hash table of the keys by {@link keyHash} (`mask + 1` entries of two
 * integers, linear probing): the key's number ({@link KeyNumbers}) + 1 (0: empty), then the
 * offset of its run of (block, count) pairs or {@link NO_RUN}, with {@link IN_HEAD} set when
 * the header holds it; the runs, each in block order, its last pair's block stored as `~block`;
 * per block its length, answer shapes, error flag and prose share.
 */
export class DocLayout {
  readonly ints: Int32Array;
  /** Hash table size minus one (a power of two minus one). */
  readonly mask: number;
  /** The {@link KeyNumbers} epoch the table's numbers belong to. */
  readonly epoch: number;
  /** Offset of the block records in `ints`. */
  readonly blockInfo: number;
  /** Number of blocks. */
  readonly blocks: number;
  /** The document's answer shapes and prose share (see {@link RankedDoc}). */
  readonly shapes: number;
  readonly prose: number;

  constructor(doc: Pick<RankedDoc, 'keys' | 'head' | 'blocks' | 'shapes' | 'prose'>) {
    const { keys, blocks } = doc;
    const n = keys.length;
    let slots = 8;
    while (slots < n + (n >> 1)) slots *= 2;
    let pairs = 0;
    for (const b of blocks) pairs += b.keys.length;
    this.mask = slots - 1;
    this.epoch = keyNumbers.epoch;
    this.blockInfo = 2 * slots + 2 * pairs;
    this.blocks = blocks.length;
    this.shapes = doc.shapes;
    this.prose = doc.prose;
    this.ints = new Int32Array(this.blockInfo + BLOCK_INTS * blocks.length);
    const runs = this.#fillRuns(doc, 2 * slots);
    this.#fillTable(doc, runs);
  }

  /** The runs of pairs and the block records; returns each key's run offset (or NO_RUN). */
  #fillRuns(doc: Pick<RankedDoc, 'keys' | 'blocks'>, pairsAt: number): Int32Array {
    const { ints } = this;
    const n = doc.keys.length;
    const runs = new Int32Array(n);
    for (const b of doc.blocks) for (const id of b.keys) runs[id]!++;
    const fill = new Int32Array(n);
    let p = pairsAt;
    for (let id = 0; id < n; id++) {
      const count = runs[id]!;
      runs[id] = count === 0 ? NO_RUN : p;
      fill[id] = p;
      p += 2 * count;
    }
    doc.blocks.forEach((b, bi) => {
      const at = this.blockInfo + BLOCK_INTS * bi;
      ints[at] = b.length;
      ints[at + 1] = b.shapes;
      ints[at + 2] = b.error ? 1 : 0;
      FLOAT[0] = b.prose;
      ints[at + 3] = FLOAT_INTS[0]!;
      ints[at + 4] = FLOAT_INTS[1]!;
      for (let i = 0; i < b.keys.length; i++) {
        const q = fill[b.keys[i]!]!;
        fill[b.keys[i]!] = q + 2;
        ints[q] = bi;
        ints[q + 1] = b.counts[i]!;
      }
    });
    // A run ends at the pair whose block is stored complemented.
    for (let id = 0; id < n; id++)
      if (runs[id] !== NO_RUN) ints[fill[id]! - 2] = ~ints[fill[id]! - 2]!;
    return runs;
  }

  #fillTable(doc: Pick<RankedDoc, 'keys' | 'head'>, runs: Int32Array): void {
    const { ints, mask } = this;
    const { keys } = doc;
    const head = new Uint8Array(keys.length);
    for (const id of doc.head) head[id] = 1;
    for (let id = 0; id < keys.length; id++) {
      let j = keyHash(keys[id]!) & mask;
      while (ints[2 * j] !== 0) j = (j + 1) & mask;
      ints[2 * j] = keyNumbers.of(keys[id]!) + 1;
      ints[2 * j + 1] = runs[id]! | (head[id] === 1 ? IN_HEAD : 0);
    }
  }

  /**
   * The offset of the table entry of the key numbered `key` ({@link KeyNumbers.of}) whose
   * {@link keyHash} is `hash`, or -1 when the document does not hold it.
   */
  find(key: number, hash: number): number {
    const { ints, mask } = this;
    const want = key + 1;
    for (let j = hash & mask; ; j = (j + 1) & mask) {
      const e = ints[2 * j]!;
      if (e === want) return 2 * j;
      if (e === 0) return -1;
    }
  }

  /** Whether the header holds the key of table entry `at`. */
  inHead(at: number): boolean {
    return this.ints[at + 1]! < 0;
  }

  /** The offset of the first (block, count) pair of the key of entry `at`, or -1 (none). */
  runOf(at: number): number {
    const r = this.ints[at + 1]! & NO_RUN;
    return r === NO_RUN ? -1 : r;
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

/**
 * The layout to score a document with, or `undefined` on its first scoring, which then reads
 * the analysis directly (a binary search per prompt key, {@link localKey}). Building a layout
 * numbers and hashes every key of the document, many times the cost of one such scoring: a
 * fresh process (the CLI, a hook) scores each candidate once and would build layouts it never
 * reads again. A document scored a second time is likely to be scored again: it gets one.
 */
export function scoringLayout(doc: RankedDoc): DocLayout | undefined {
  const layout = doc.layout;
  if (layout !== undefined && layout.epoch === keyNumbers.epoch) return layout;
  if (!doc.scoredOnce) {
    doc.scoredOnce = true;
    return undefined;
  }
  return docLayout(doc);
}

/** The layout of a document, built on first use (and again after the key numbering started over). */
export function docLayout(doc: RankedDoc): DocLayout {
  let layout = doc.layout;
  if (layout === undefined || layout.epoch !== keyNumbers.epoch) {
    layout = new DocLayout(doc);
    doc.layout = layout;
  }
  return layout;
}
