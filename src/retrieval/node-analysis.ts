import { hash } from 'node:crypto';
import { compareCodePoints } from '../protocol/canonical-json.js';
import {
  ANALYSIS_CHARS,
  type BlockSpan,
  blockSpans,
  type PayloadRead,
  readSpans,
} from './block-spans.js';
import { ANSWER_SHAPES, hasErrorSignal, SHAPE_PATTERNS } from './ranked-intent.js';
import {
  keyIdCount,
  keyIdIsHigh,
  keyIdPrefix,
  keyOfId,
  type ProseCounts,
  proseCounts,
  proseShare,
  pushKeyIds,
  resetKeyIdsIfFull,
} from './ranked-terms.js';

export { ANALYSIS_CHARS, BLOCK_CHARS } from './block-spans.js';

/**
 * Version of {@link analyzeNode}'s output. Bump it in the same change as any edit that alters
 * what an analysis holds (keys, blocks, shapes, …): stored or cached analyses of another version
 * are analysed again, never mixed with fresh ones.
 */
export const NODE_ANALYSIS_VERSION = 3;

/**
 * Version of the analyses a store keeps ({@link analyzeNode} and {@link storedAnalysis}'s
 * encoding). It is part of every analysis key and of the store's index state: a store whose
 * analyses are of another version re-analyses its nodes (pending) instead of ranking with them.
 * `r1` was the single-document analysis before blocks, `r2` read the whole payload however long
 * (see {@link ANALYSIS_CHARS}); bump with either version above.
 */
export const RANKED_ANALYZER_VERSION = `ranked-analysis-r${NODE_ANALYSIS_VERSION}`;

/** One block of a turn's payload: lines `[start, end)` and the retrieval keys they hold. */
export interface BlockAnalysis {
  start: number;
  end: number;
  /** Indices into the node's `keys`, strictly increasing. */
  keys: number[];
  /** Term frequency of each key in the block (parallel to `keys`). */
  counts: number[];
  /** Sum of `counts` (block length for BM25). */
  length: number;
  /** Bit i set: the block holds answer shape `ANSWER_SHAPES[i]`. */
  shapes: number;
  /** The block reports a failure (see `hasErrorSignal`). */
  error: boolean;
  /** Share of English function words (see `proseRatio`), rounded to 1/1000. */
  prose: number;
}

/**
 * Everything the ranked page-in derives from one folded turn: a pure function of the turn's
 * summary and payload text, plain JSON, so it can be stored beside the index (or cached) and
 * inserted later without the text. Blocks let a scan score the part of a long turn that holds
 * the prompt's keys instead of the whole turn.
 */
export interface NodeAnalysis {
  version: typeof NODE_ANALYSIS_VERSION;
  /** Distinct retrieval keys of summary and payload, sorted by code point. */
  keys: string[];
  /** Term frequency of each key (≥ 1), parallel to `keys`. */
  counts: number[];
  /** Sum of `counts`. */
  length: number;
  /** Tokens of the payload in the engine's tokenizer. */
  tokens: number;
  /** Keys of the turn's header (its summary and first payload line): indices into `keys`. */
  head: number[];
  /** The payload in blocks of whole lines, in order (at least one). */
  blocks: BlockAnalysis[];
  /** The payload reports a failure somewhere. */
  error: boolean;
  /** Share of function words in the whole payload. */
  prose: number;
  /** Answer shapes the payload holds (bit i: `ANSWER_SHAPES[i]`). */
  shapes: number;
  /**
   * Present only when the payload is longer than {@link ANALYSIS_CHARS}: every field above then
   * describes the part read (blocks of the head and of the tail, their line numbers those of the
   * whole payload, a gap between them), out of `chars` characters. Absent for a whole analysis.
   */
  partial?: PartialRead;
}

/** How much of a payload a partial analysis read (both in UTF-16 code units). */
export interface PartialRead {
  /** The payload's length. */
  chars: number;
  /** Characters analysed (less than `chars`). */
  analysed: number;
}

/** Input of {@link analyzeNode}. */
export interface AnalyzeInput {
  summary: string;
  /** The payload text (for non-UTF-8 payloads, its lossy decoding). */
  text: string;
  /** Tokens of the payload in the engine's tokenizer. */
  tokens: number;
}

const round3 = (x: number): number => Math.round(x * 1000) / 1000;

/** Bit mask of the answer shapes a text holds. */
export function shapeMask(text: string): number {
  let mask = 0;
  SHAPE_PATTERNS.forEach((shape, i) => {
    if (shape.test(text)) mask |= 1 << i;
  });
  return mask;
}

/**
 * Answer shapes whose match can hold a line break (`\s?`, `\D{0,4}`, `"command"\s*:`), so a
 * match can straddle two blocks. Every other shape matches within one line, and a block's lines
 * match as they do in the whole text (a block starts after a line break and ends with one).
 */
const SPANNING_SHAPES = ANSWER_SHAPES.reduce(
  (mask, s, i) => (['quantity', 'command', 'port'].includes(s.name) ? mask | (1 << i) : mask),
  0,
);

/**
 * The shapes of the payload read from its blocks' (the same as {@link shapeMask} of the text
 * read): only a spanning shape that no block holds is looked for again, in each run of
 * consecutive blocks (the whole text, unless the analysis is partial).
 */
function wholeShapes(text: string, spans: readonly BlockSpan[], blocks: readonly BlockAnalysis[]) {
  let mask = 0;
  for (const b of blocks) mask |= b.shapes;
  if (blocks.length < 2) return mask;
  const runs: string[] = [];
  let from = spans[0]!.from;
  for (let i = 1; i < spans.length; i++) {
    if (spans[i]!.from === spans[i - 1]!.to) continue;
    runs.push(text.slice(from, spans[i - 1]!.to));
    from = spans[i]!.from;
  }
  runs.push(text.slice(from, spans[spans.length - 1]!.to));
  SHAPE_PATTERNS.forEach((shape, i) => {
    const bit = 1 << i;
    if ((SPANNING_SHAPES & bit) !== 0 && (mask & bit) === 0 && runs.some((r) => shape.test(r))) {
      mask |= bit;
    }
  });
  return mask;
}

/** Splits a payload into lines that keep their terminator (the lines a page window counts). */
export function payloadLines(text: string): string[] {
  return text.split(/(?<=\n)/u);
}

/** Per key id, a count or a rank; every entry is zero again when a function returns it. */
let scratch = new Int32Array(4096);

function zeroedScratch(size: number): Int32Array {
  if (scratch.length < size) scratch = new Int32Array(Math.max(size, scratch.length * 2));
  return scratch;
}

/** Per index into a node's keys, a count; every entry is zero again when `indexed` returns. */
let tallyScratch = new Int32Array(1024);

function zeroedTally(size: number): Int32Array {
  if (tallyScratch.length < size)
    tallyScratch = new Int32Array(Math.max(size, tallyScratch.length * 2));
  return tallyScratch;
}

/** Key ids of the summary, of the first payload line and of each block (repeats kept). */
function keyIdsOf(input: AnalyzeInput, spans: BlockSpan[], firstLineEnd: number) {
  const summary: number[] = [];
  pushKeyIds(input.summary, summary);
  // Keys never span a line break, so block 0's keys are the first line's, then the rest's.
  const firstLine: number[] = [];
  pushKeyIds(input.text.slice(0, firstLineEnd), firstLine);
  const blocks = spans.map((b, i) => {
    const ids = i === 0 ? firstLine.slice() : [];
    pushKeyIds(input.text.slice(i === 0 ? firstLineEnd : b.from, b.to), ids);
    return ids;
  });
  return { summary, firstLine, blocks };
}

/** Up to 2^21 ids, each with a 30-bit key prefix above it, stay exact in a double. */
const MAX_PREFIX_SORTED = 1 << 21;

/** Sorts ids by their keys' code points with a comparison of the strings. */
function sortIdsByString(ids: number[]): number[] {
  let high = false;
  for (const id of ids) high ||= keyIdIsHigh(id);
  if (high) return ids.sort((x, y) => compareCodePoints(keyOfId(x), keyOfId(y)));
  return ids.sort((x, y) => (keyOfId(x) < keyOfId(y) ? -1 : 1));
}

/**
 * Sorts ids by their keys' code points. When every key is ASCII (see `keyIdPrefix`): a native
 * numeric sort on the keys' packed first five characters, then a sort of the strings within
 * each run of equal prefixes (see {@link sortRun}), so most keys are never compared as strings
 * (a quarter to a third faster than sorting the strings natively).
 */
function sortIdsByKey(ids: number[]): number[] {
  const n = ids.length;
  if (n >= MAX_PREFIX_SORTED) return sortIdsByString(ids);
  const packed = new Float64Array(n);
  for (let i = 0; i < n; i++) {
    const p = keyIdPrefix(ids[i]!);
    if (p < 0) return sortIdsByString(ids);
    packed[i] = p * MAX_PREFIX_SORTED + i;
  }
  packed.sort();
  const out = new Array<number>(n);
  for (let i = 0; i < n; i++) out[i] = ids[packed[i]! % MAX_PREFIX_SORTED]!;
  for (let i = 0, j = 1; i < n; i = j++) {
    const p = Math.floor(packed[i]! / MAX_PREFIX_SORTED);
    while (j < n && Math.floor(packed[j]! / MAX_PREFIX_SORTED) === p) j++;
    if (j - i > 1) sortRun(out, i, j);
  }
  return out;
}

/** Runs longer than this are sorted natively, shorter ones by insertion. */
const INSERTION_RUN = 16;

/**
 * Sorts `out[from, to)`, ids of keys with the same packed prefix, by their keys (ASCII, so
 * UTF-16 order is code-point order). Most runs are short, but a log's timestamps or versions
 * share their first five characters by the thousand: by insertion alone, a 35 MB log's sort
 * took minutes.
 */
function sortRun(out: number[], from: number, to: number): void {
  if (to - from > INSERTION_RUN) {
    const run = out.slice(from, to).sort((x, y) => (keyOfId(x) < keyOfId(y) ? -1 : 1));
    for (let i = from; i < to; i++) out[i] = run[i - from]!;
    return;
  }
  for (let i = from + 1; i < to; i++) {
    const id = out[i]!;
    const key = keyOfId(id);
    let j = i;
    while (j > from && keyOfId(out[j - 1]!) > key) {
      out[j] = out[j - 1]!;
      j--;
    }
    out[j] = id;
  }
}

/** The distinct ids of some id lists, sorted by their keys' code points, and their counts. */
function sortedKeys(lists: readonly (readonly number[])[]): { ids: number[]; counts: number[] } {
  const count = zeroedScratch(keyIdCount());
  const distinct: number[] = [];
  for (const list of lists) {
    for (const id of list) if (count[id]!++ === 0) distinct.push(id);
  }
  const ids = sortIdsByKey(distinct);
  const counts = ids.map((id) => count[id]!);
  for (const id of ids) count[id] = 0;
  return { ids, counts };
}

/**
 * Indices into the node's keys (`rank`: key id → index + 1) of an id list, increasing, with
 * their counts in the list.
 */
function indexed(list: readonly number[], rank: Int32Array, size: number) {
  const tally = zeroedTally(size);
  const keys: number[] = [];
  for (const id of list) {
    const k = rank[id]! - 1;
    if (tally[k]!++ === 0) keys.push(k);
  }
  // In order by a pass over the node's keys when they are few for the list (a turn's usual
  // block), else by a sort: a pass per block of a large log of many distinct keys would cost
  // blocks × keys.
  if (size <= 8 * list.length) {
    keys.length = 0;
    for (let k = 0; k < size; k++) if (tally[k]! > 0) keys.push(k);
  } else {
    keys.sort((x, y) => x - y);
  }
  const counts = keys.map((k) => tally[k]!);
  for (const k of keys) tally[k] = 0;
  return { keys, counts };
}

/**
 * Analyses one folded turn for the ranked page-in (pure: no index state, no clock). Keys come
 * from the summary and the payload; blocks cover the payload only.
 *
 * @example
 * const a = analyzeNode({ summary: 'tool: psql', text: 'port 5433\nport 5434\n', tokens: 8 });
 * a.keys; // ['5433', '5434', 'port', 'psql', 'tool']
 * a.blocks.length; // 1
 */
export function analyzeNode(input: AnalyzeInput): NodeAnalysis {
  const whole = blockSpans(input.text);
  const read = readSpans(input.text, whole.spans, ANALYSIS_CHARS);
  const { spans } = read;
  const firstLineEnd = Math.min(whole.firstLineEnd, spans[0]!.to);
  resetKeyIdsIfFull();
  const ids = keyIdsOf(input, spans, firstLineEnd);
  const all = sortedKeys([ids.summary, ...ids.blocks]);
  const keys = all.ids.map(keyOfId);
  const size = keys.length;
  const rank = zeroedScratch(keyIdCount());
  all.ids.forEach((id, i) => {
    rank[id] = i + 1;
  });
  const head = indexed(ids.summary.concat(ids.firstLine), rank, size).keys;
  // Blocks are runs of whole lines, and neither a failure line nor a letter run crosses a line
  // break: the payload's failure flag and prose counts are its blocks' (a property test checks
  // both against the whole text).
  const prose: ProseCounts = { words: 0, stop: 0 };
  const blocks = spans.map((b, i): BlockAnalysis => {
    const tf = indexed(ids.blocks[i]!, rank, size);
    const text = input.text.slice(b.from, b.to);
    const pc = proseCounts(text);
    prose.words += pc.words;
    prose.stop += pc.stop;
    return {
      start: b.start,
      end: b.end,
      keys: tf.keys,
      counts: tf.counts,
      length: ids.blocks[i]!.length,
      shapes: shapeMask(text),
      error: hasErrorSignal(text),
      prose: round3(proseShare(pc)),
    };
  });
  for (const id of all.ids) rank[id] = 0;
  return {
    version: NODE_ANALYSIS_VERSION,
    keys,
    counts: all.counts,
    length: all.counts.reduce((s, n) => s + n, 0),
    tokens: input.tokens,
    head,
    blocks,
    error: blocks.some((b) => b.error),
    prose: round3(proseShare(prose)),
    shapes: wholeShapes(input.text, spans, blocks),
    ...partialRead(input.text, read),
  };
}

/** The `partial` field of an analysis that did not read the whole payload (none otherwise). */
function partialRead(text: string, read: PayloadRead): { partial?: PartialRead } {
  return read.analysed < text.length
    ? { partial: { chars: text.length, analysed: read.analysed } }
    : {};
}

const isCount = (n: unknown): n is number => Number.isSafeInteger(n) && (n as number) >= 0;
const isRatio = (n: unknown): n is number => typeof n === 'number' && n >= 0 && n <= 1;

function isIndexList(v: unknown, size: number): v is number[] {
  if (!Array.isArray(v)) return false;
  for (let i = 0; i < v.length; i++) {
    const n: unknown = v[i];
    if (!isCount(n) || n >= size || (i > 0 && n <= (v[i - 1] as number))) return false;
  }
  return true;
}

function isCounts(v: unknown, length: number): v is number[] {
  if (!Array.isArray(v) || v.length !== length) return false;
  return v.every((n) => isCount(n) && n >= 1);
}

function parseBlock(v: unknown, size: number, lines: { end: number }): BlockAnalysis | undefined {
  if (typeof v !== 'object' || v === null) return undefined;
  const b = v as Record<string, unknown>;
  if (!isCount(b.start) || !isCount(b.end) || b.start > b.end || b.start < lines.end) return;
  if (!isIndexList(b.keys, size) || !isCounts(b.counts, b.keys.length)) return undefined;
  if (!isCount(b.length) || b.counts.reduce((s, n) => s + n, 0) !== b.length) return undefined;
  if (!isCount(b.shapes) || typeof b.error !== 'boolean' || !isRatio(b.prose)) return undefined;
  lines.end = b.end;
  return {
    start: b.start,
    end: b.end,
    keys: b.keys,
    counts: b.counts,
    length: b.length,
    shapes: b.shapes,
    error: b.error,
    prose: b.prose,
  };
}

/**
 * Validates a stored or cached analysis (parsed JSON): the right version and every invariant a
 * fresh analysis has (keys distinct and sorted, counts that sum to the lengths, block indices in
 * range, blocks in line order). Returns `undefined` for anything else, so a caller analyses the
 * turn again instead of ranking with a damaged record.
 *
 * @example
 * parseNodeAnalysis(JSON.parse(JSON.stringify(a))); // deep-equal to a
 * parseNodeAnalysis({ version: 1 }); // undefined
 */
export function parseNodeAnalysis(v: unknown): NodeAnalysis | undefined {
  if (typeof v !== 'object' || v === null || Array.isArray(v)) return undefined;
  const a = v as Record<string, unknown>;
  if (a.version !== NODE_ANALYSIS_VERSION || !Array.isArray(a.keys)) return undefined;
  const keys = a.keys as unknown[];
  for (let i = 0; i < keys.length; i++) {
    const k = keys[i];
    if (typeof k !== 'string' || k.length === 0) return undefined;
    if (i > 0 && compareCodePoints(keys[i - 1] as string, k) >= 0) return undefined;
  }
  if (!isCounts(a.counts, keys.length) || !isCount(a.length) || !isCount(a.tokens)) return;
  if (a.counts.reduce((s, n) => s + n, 0) !== a.length) return undefined;
  if (!isIndexList(a.head, keys.length) || !Array.isArray(a.blocks) || a.blocks.length === 0) {
    return undefined;
  }
  if (typeof a.error !== 'boolean' || !isRatio(a.prose) || !isCount(a.shapes)) return undefined;
  const lines = { end: 0 };
  const blocks: BlockAnalysis[] = [];
  for (const b of a.blocks) {
    const parsed = parseBlock(b, keys.length, lines);
    if (!parsed) return undefined;
    blocks.push(parsed);
  }
  const partial = parsePartial(a.partial);
  if (partial === null) return undefined;
  return {
    version: NODE_ANALYSIS_VERSION,
    keys: keys as string[],
    counts: a.counts,
    length: a.length,
    tokens: a.tokens,
    head: a.head,
    blocks,
    error: a.error,
    prose: a.prose,
    shapes: a.shapes,
    ...(partial ? { partial } : {}),
  };
}

/** A stored `partial` (undefined when absent, null when malformed: the analysis is refused). */
function parsePartial(v: unknown): PartialRead | undefined | null {
  if (v === undefined) return undefined;
  if (typeof v !== 'object' || v === null) return null;
  const { chars, analysed } = v as Record<string, unknown>;
  if (!isCount(chars) || !isCount(analysed) || analysed >= chars) return null;
  return { chars, analysed };
}

/**
 * The content address of a node's analysis: the analyzer version, the payload hash and the
 * summary (a node is immutable, so an analysis under this key never goes stale). The token
 * count is not part of a stored analysis (it depends on the engine's tokenizer; the store keeps
 * counts per tokenizer apart).
 *
 * @example
 * analysisKey({ payload_sha256: 'ab…', summary: 'tool: psql' }); // 64 hex
 */
export function analysisKey(node: { payload_sha256: string; summary: string }): string {
  return hash(
    'sha256',
    `${RANKED_ANALYZER_VERSION}\0${node.payload_sha256}\0${node.summary}`,
    'hex',
  );
}

/**
 * An analysis in the generic form a store keeps: postings (`terms` with their frequencies), the
 * document length, its scoring parts (blocks) with their summed length (for the collection's
 * mean block length), and `features`, an opaque string only {@link decodeStoredAnalysis} reads.
 */
export interface StoredNodeAnalysis {
  terms: string[];
  tfs: number[];
  length: number;
  parts: number;
  partLength: number;
  features: string;
}

/**
 * The stored form of an analysis (without its token count: see {@link analysisKey}).
 *
 * @example
 * decodeStoredAnalysis(storedAnalysis(a).features, a.tokens); // deep-equal to a
 */
export function storedAnalysis(a: NodeAnalysis): StoredNodeAnalysis {
  return {
    terms: a.keys,
    tfs: a.counts,
    length: a.length,
    parts: a.blocks.length,
    partLength: a.blocks.reduce((s, b) => s + b.length, 0),
    features: JSON.stringify({ ...a, tokens: 0 }),
  };
}

/**
 * Reads what {@link storedAnalysis} wrote, with the token count of the engine's tokenizer;
 * `undefined` for anything that is not a valid analysis of this version (see
 * {@link parseNodeAnalysis}), so a damaged row is never ranked with.
 */
export function decodeStoredAnalysis(features: string, tokens: number): NodeAnalysis | undefined {
  let v: unknown;
  try {
    v = JSON.parse(features);
  } catch {
    return undefined;
  }
  const a = parseNodeAnalysis(v);
  return a && { ...a, tokens };
}
