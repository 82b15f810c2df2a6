import { hash } from 'node:crypto';
import { sortedUniqueByCodePoint } from '../extract/sort.js';
import { compareCodePoints } from '../protocol/canonical-json.js';
import { ANSWER_SHAPES, hasErrorSignal } from './ranked-intent.js';
import { type ProseCounts, proseCounts, proseShare, rankedTerms } from './ranked-terms.js';

/**
 * Version of {@link analyzeNode}'s output. Bump it in the same change as any edit that alters
 * what an analysis holds (keys, blocks, shapes, …): stored or cached analyses of another version
 * are analysed again, never mixed with fresh ones.
 */
export const NODE_ANALYSIS_VERSION = 2;

/**
 * Version of the analyses a store keeps ({@link analyzeNode} and {@link storedAnalysis}'s
 * encoding). It is part of every analysis key and of the store's index state: a store whose
 * analyses are of another version re-analyses its nodes (pending) instead of ranking with them.
 * `r1` was the single-document analysis before blocks; bump with either version above.
 */
export const RANKED_ANALYZER_VERSION = `ranked-analysis-r${NODE_ANALYSIS_VERSION}`;

/** A block is a run of whole lines of at most this many characters (a longer line is its own block). */
export const BLOCK_CHARS = 1000;

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
  ANSWER_SHAPES.forEach((s, i) => {
    if (s.shape.test(text)) mask |= 1 << i;
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
 * The shapes of a whole payload from its blocks' (the same as {@link shapeMask} of the text):
 * only a spanning shape that no block holds is looked for again in the whole text.
 */
function wholeShapes(text: string, blocks: readonly BlockAnalysis[]): number {
  let mask = 0;
  for (const b of blocks) mask |= b.shapes;
  if (blocks.length < 2) return mask;
  ANSWER_SHAPES.forEach((s, i) => {
    const bit = 1 << i;
    if ((SPANNING_SHAPES & bit) !== 0 && (mask & bit) === 0 && s.shape.test(text)) mask |= bit;
  });
  return mask;
}

/** Splits a payload into lines that keep their terminator (the lines a page window counts). */
export function payloadLines(text: string): string[] {
  return text.split(/(?<=\n)/u);
}

function blocksOf(lines: readonly string[]): { start: number; end: number; text: string }[] {
  const out: { start: number; end: number; text: string }[] = [];
  let cur: { start: number; end: number; text: string } | undefined;
  lines.forEach((line, i) => {
    if (!cur || (cur.text.length > 0 && cur.text.length + line.length > BLOCK_CHARS)) {
      cur = { start: i, end: i, text: '' };
      out.push(cur);
    }
    cur.text += line;
    cur.end = i + 1;
  });
  if (out.length === 0) out.push({ start: 0, end: 0, text: '' });
  return out;
}

function countKeys(text: string): Map<string, number> {
  const tf = new Map<string, number>();
  for (const k of rankedTerms(text)) tf.set(k, (tf.get(k) ?? 0) + 1);
  return tf;
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
  const lines = payloadLines(input.text);
  const blockTexts = blocksOf(lines);
  const blockTf = blockTexts.map((b) => countKeys(b.text));
  const headTf = countKeys(`${input.summary}\n${lines[0] ?? ''}`);
  const summaryTf = countKeys(input.summary);
  const all = new Map<string, number>(summaryTf);
  for (const tf of blockTf) for (const [k, n] of tf) all.set(k, (all.get(k) ?? 0) + n);
  const keys = sortedUniqueByCodePoint(all.keys());
  const id = new Map(keys.map((k, i) => [k, i]));
  const counts = keys.map((k) => all.get(k)!);
  // Blocks are runs of whole lines, and neither a failure line nor a letter run crosses a line
  // break: the payload's failure flag and prose counts are its blocks' (a property test checks
  // both against the whole text). Shapes can span lines, so they are tested on the whole text.
  const prose: ProseCounts = { words: 0, stop: 0 };
  const blocks = blockTexts.map((b, i): BlockAnalysis => {
    const tf = blockTf[i]!;
    const ids = [...tf.keys()].map((k) => id.get(k)!).sort((x, y) => x - y);
    const bc = ids.map((j) => tf.get(keys[j]!)!);
    const pc = proseCounts(b.text);
    prose.words += pc.words;
    prose.stop += pc.stop;
    return {
      start: b.start,
      end: b.end,
      keys: ids,
      counts: bc,
      length: bc.reduce((s, n) => s + n, 0),
      shapes: shapeMask(b.text),
      error: hasErrorSignal(b.text),
      prose: round3(proseShare(pc)),
    };
  });
  return {
    version: NODE_ANALYSIS_VERSION,
    keys,
    counts,
    length: counts.reduce((s, n) => s + n, 0),
    tokens: input.tokens,
    head: [...headTf.keys()].map((k) => id.get(k)!).sort((x, y) => x - y),
    blocks,
    error: blocks.some((b) => b.error),
    prose: round3(proseShare(prose)),
    shapes: wholeShapes(input.text, blocks),
  };
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
  };
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
