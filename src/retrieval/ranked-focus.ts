import { ANALYSIS_CHARS, blockSpans, readSpans } from './block-spans.js';
import type { KeyMatch } from './ranked-scan.js';
import { rankedTerms } from './ranked-terms.js';

/** Options of {@link focusWindow}. */
export interface FocusOptions {
  /** The verified payload text of one turn. */
  content: string;
  /** Retrieval keys to focus on, with weights (a ranked pick's `focus`). */
  focus: readonly KeyMatch[];
  /** Tokens the window may take at most. */
  maxTokens: number;
  /** The engine's token counter. */
  count: (text: string) => number;
  /**
   * Lines of context kept on each side of the matched lines. Default: widen to `maxTokens`.
   * A tight window (e.g. 3) keeps a low-confidence page small.
   */
  context?: number;
  /**
   * When the window stops short of the payload's end, also show the last lines (at most a fifth
   * of the cap, 100 tokens), after an {@link ELISION} line. Default false.
   */
  tail?: boolean;
}

/** A window of whole lines of a payload (the whole payload when it fits). */
export interface FocusWindow {
  text: string;
  tokens: number;
  /** First line of the window, 0-based. */
  startLine: number;
  /** One past the last line of the window. */
  endLine: number;
  /**
   * The payload's last lines, shown after the window (and an {@link ELISION} line when the two
   * do not meet); 0 when the window has none.
   */
  tailLines: number;
  /** Lines in the payload (over-long lines count as the pieces they are cut into). */
  lines: number;
  /** True when the window is less than the whole payload. */
  truncated: boolean;
}

/** The line that stands for the lines left out between a window and the payload's tail. */
export const ELISION = '[…]\n';

/**
 * A truncated window also shows the payload's last lines, in at most this share of its cap (and
 * {@link TAIL_MAX_TOKENS}): a turn that runs a command ends with its outcome (the test summary,
 * the error, the id a sub-agent returns), far from the lines that name what was run.
 */
const TAIL_SHARE = 0.2;
const TAIL_MAX_TOKENS = 100;

/** How many last lines fit the tail budget (0 when even the last line does not). */
function tailOf(lineTokens: readonly number[], maxTokens: number): number {
  const budget = Math.min(TAIL_MAX_TOKENS, Math.floor(maxTokens * TAIL_SHARE));
  let used = 0;
  let n = 0;
  for (let i = lineTokens.length - 1; i > 0; i--) {
    // A line the search did not read (the unread end of a huge last line) ends the tail.
    if (lineTokens[i] === undefined || used + lineTokens[i]! > budget) break;
    used += lineTokens[i]!;
    n++;
  }
  return n;
}

/** A piece of a line longer than this many tokens is cut (minified code, base64 blobs). */
const MAX_PIECE_CHARS_PER_TOKEN = 2;

function splitLines(content: string, maxTokens: number): string[] {
  const maxChars = Math.max(16, maxTokens * MAX_PIECE_CHARS_PER_TOKEN);
  const out: string[] = [];
  for (const line of content.split(/(?<=\n)/u)) {
    if (line.length <= maxChars) {
      out.push(line);
      continue;
    }
    let i = 0;
    while (i < line.length) {
      let j = Math.min(line.length, i + maxChars);
      // Never split a surrogate pair.
      const c = line.charCodeAt(j - 1);
      if (j < line.length && c >= 0xd800 && c <= 0xdbff) j--;
      out.push(line.slice(i, j));
      i = j;
    }
  }
  return out;
}

/**
 * Picks the window of whole lines, at most `maxTokens`, that covers the most focus weight
 * (distinct keys count fully, repeats a little), then widens it with the surrounding lines up to
 * the cap. Ties go to the later window: logs end with their summary line. A payload that fits
 * is returned whole. Lines are cut only when a single line is over the cap.
 *
 * @example
 * focusWindow({ content: big, focus: [{ key: 'doctest', weight: 2 }], maxTokens: 800, count });
 * // → the ~800-token run of lines around the last "N doctests, M tests" line
 */
export function focusWindow(options: FocusOptions): FocusWindow {
  const { content, focus, maxTokens, count } = options;
  const context = options.context ?? Number.POSITIVE_INFINITY;
  const total = count(content);
  const lines = splitLines(content, maxTokens);
  if (total <= maxTokens && context === Number.POSITIVE_INFINITY) {
    return {
      text: content,
      tokens: total,
      startLine: 0,
      endLine: lines.length,
      tailLines: 0,
      lines: lines.length,
      truncated: false,
    };
  }
  const weights = new Map<string, number>();
  for (const f of focus) weights.set(f.key, Math.max(weights.get(f.key) ?? 0, f.weight));
  const runs = readRuns(content, lines);
  const lineKeys: string[][] = new Array(lines.length);
  const lineTokens: number[] = new Array(lines.length);
  for (const [from, to] of runs) {
    for (let i = from; i < to; i++) {
      lineKeys[i] = [...new Set(rankedTerms(lines[i]!))].filter((k) => weights.has(k));
      lineTokens[i] = count(lines[i]!);
    }
  }
  const runOf = (n: number, cap: number) =>
    bestOfRuns(runs, { lineKeys, lineTokens, weights, from: 0, n, cap, context });
  const whole = runOf(lines.length, maxTokens);
  const tail =
    options.tail && context === Number.POSITIVE_INFINITY ? tailOf(lineTokens, maxTokens) : 0;
  // A window that already reaches the last lines needs no tail.
  if (tail === 0 || whole.z > lines.length - tail) {
    return windowOf(content, lines, whole.a, whole.z, 0, maxTokens, count);
  }
  let tailTokens = 0;
  for (let i = lines.length - tail; i < lines.length; i++) tailTokens += lineTokens[i]!;
  const run = runOf(lines.length - tail, maxTokens - tailTokens - count(ELISION));
  return windowOf(content, lines, run.a, run.z, tail, maxTokens, count);
}

/**
 * The runs of lines `[from, to)` the window is looked for in: every line, unless the payload is
 * longer than {@link ANALYSIS_CHARS}; then the lines of the part its analysis reads (its head
 * and its tail, see `readSpans`), so a page-in of a huge turn reads and counts no more than one
 * of a turn at that bound (the scan knows no key elsewhere in it anyway).
 */
function readRuns(content: string, lines: readonly string[]): [number, number][] {
  if (content.length <= ANALYSIS_CHARS) return [[0, lines.length]];
  const { spans } = readSpans(content, blockSpans(content).spans, ANALYSIS_CHARS);
  const runs: [number, number][] = [];
  let s = 0;
  for (let i = 0, at = 0; i < lines.length && s < spans.length; at += lines[i]!.length, i++) {
    while (s < spans.length && spans[s]!.to <= at) s++;
    const span = spans[s];
    if (!span || at < span.from || at + lines[i]!.length > span.to) continue;
    const last = runs[runs.length - 1];
    if (last && last[1] === i) last[1] = i + 1;
    else runs.push([i, i + 1]);
  }
  return runs.length > 0 ? runs : [[0, 1]];
}

/**
 * The best run of lines among the first `n` ({@link bestRun}) within each of `runs`: the one of
 * the highest score, ties to the later; the first run's when none holds a focus key.
 */
function bestOfRuns(runs: readonly [number, number][], input: RunInput) {
  let best: { a: number; z: number; score: number } | undefined;
  for (const [from, to] of runs) {
    if (best && from >= input.n) break;
    const r = bestRun({ ...input, from, n: Math.min(to, input.n) });
    if (!best || (r.score > 0 && r.score >= best.score)) best = r;
  }
  return best!;
}

/** Inputs of {@link bestRun}: per-line keys and tokens of lines `[from, n)`, a token cap. */
interface RunInput {
  lineKeys: readonly string[][];
  lineTokens: readonly number[];
  weights: ReadonlyMap<string, number>;
  from: number;
  n: number;
  cap: number;
  context: number;
}

/**
 * The run of lines among `[from, n)`, at most `cap` tokens, that covers the most focus weight
 * (distinct keys count fully, repeats a little; ties go to the later run), shrunk to the lines
 * that carry keys and widened evenly with `context` lines on each side up to the cap.
 */
function bestRun(input: RunInput): { a: number; z: number; score: number } {
  const { lineKeys, lineTokens, weights, from, n, cap, context } = input;
  // Sliding window over lines maximising distinct-key weight plus a small bonus per repeat.
  const inWindow = new Map<string, number>();
  let score = 0;
  let tokens = 0;
  let bestScore = -1;
  let bestLo = from;
  let bestHi = from;
  let lo = from;
  for (let hi = from; hi < n; hi++) {
    for (const k of lineKeys[hi]!) {
      const w = weights.get(k)!;
      const seen = inWindow.get(k) ?? 0;
      score += seen === 0 ? w : w * 0.05;
      inWindow.set(k, seen + 1);
    }
    tokens += lineTokens[hi]!;
    while (tokens > cap && lo < hi) {
      for (const k of lineKeys[lo]!) {
        const w = weights.get(k)!;
        const seen = inWindow.get(k)!;
        score -= seen === 1 ? w : w * 0.05;
        inWindow.set(k, seen - 1);
      }
      tokens -= lineTokens[lo]!;
      lo++;
    }
    if (tokens <= cap && score >= bestScore && score > 0) {
      bestScore = score;
      bestLo = lo;
      bestHi = hi + 1;
    }
  }
  if (bestScore <= 0) {
    // Nothing to focus on: the head of the payload, as a plain chunk would give.
    bestLo = from;
    bestHi = Math.min(from + 1, n);
  }
  // Shrink the core to the lines that carry focus keys, then widen it evenly with context.
  let a = bestLo;
  let z = bestHi;
  while (a < z && lineKeys[a]!.length === 0) a++;
  while (z > a && lineKeys[z - 1]!.length === 0) z--;
  let used = 0;
  for (let i = a; i < z; i++) used += lineTokens[i]!;
  let growDown = true;
  const core = { a, z };
  for (;;) {
    const down = z < n && z - core.z < context && used + lineTokens[z]! <= cap;
    const up = a > from && core.a - a < context && used + lineTokens[a - 1]! <= cap;
    if (!down && !up) break;
    if ((growDown && down) || !up) {
      used += lineTokens[z]!;
      z++;
    } else {
      a--;
      used += lineTokens[a]!;
    }
    growDown = !growDown;
  }
  return { a, z, score: bestScore };
}

/**
 * The text of lines [a, z) of a payload, trimmed to `maxTokens` exactly as a focused page is.
 * Deterministic in its inputs, so a recorded window (its final start and end line and cap) is
 * re-derived byte for byte from the verified payload (replay).
 *
 * @example
 * focusedText({ content, startLine: 4, endLine: 9, maxTokens: 800, count }).text;
 */
export function focusedText(options: {
  content: string;
  startLine: number;
  endLine: number;
  /** The payload's last lines shown after the window (a page's `tail_lines`; default 0). */
  tailLines?: number;
  maxTokens: number;
  count: (text: string) => number;
}): FocusWindow {
  const { content, maxTokens, count } = options;
  const lines = splitLines(content, maxTokens);
  const tail = Math.max(0, Math.min(options.tailLines ?? 0, lines.length));
  const body = lines.length - tail;
  const a = Math.max(0, Math.min(options.startLine, body));
  const z = Math.max(a, Math.min(options.endLine, body));
  return windowOf(content, lines, a, z, tail, maxTokens, count);
}

/** Lines [a, z), then the last `tail` lines (after an elision line when they do not meet). */
function joined(lines: readonly string[], a: number, z: number, tail: number): string {
  const text = lines.slice(a, z).join('');
  if (tail === 0) return text;
  const from = lines.length - tail;
  const gap = z < from && z > a ? ELISION : '';
  return text + gap + lines.slice(Math.max(from, z)).join('');
}

function windowOf(
  content: string,
  lines: string[],
  a: number,
  z: number,
  tailLines: number,
  maxTokens: number,
  count: (text: string) => number,
): FocusWindow {
  let tail = tailLines;
  let text = joined(lines, a, z, tail);
  let exact = count(text);
  // Per-line counts can differ slightly from the count of the joined text: trim to the cap.
  while (exact > maxTokens && z - a > 1) {
    if (z - 1 > (a + z) / 2) z--;
    else a++;
    text = joined(lines, a, z, tail);
    exact = count(text);
  }
  // A cap too small for a line and the tail (a page fitted to a few bytes) keeps the window.
  if (exact > maxTokens && tail > 0) {
    tail = 0;
    text = joined(lines, a, z, 0);
    exact = count(text);
  }
  // A single piece can still be over the cap (dense scripts): cut it by characters.
  while (exact > maxTokens && text.length > 0) {
    text = cutChars(text, Math.floor((text.length * maxTokens) / exact) - 1);
    exact = count(text);
  }
  const gap = z < lines.length - tail;
  const truncated = a > 0 || gap || text.length < content.length;
  return {
    text,
    tokens: exact,
    startLine: a,
    endLine: z,
    tailLines: tail,
    lines: lines.length,
    truncated,
  };
}

function cutChars(text: string, n: number): string {
  let j = Math.max(0, Math.min(text.length, n));
  const c = text.charCodeAt(j - 1);
  if (j > 0 && c >= 0xd800 && c <= 0xdbff) j--;
  return text.slice(0, j);
}
