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
}

/** A window of whole lines of a payload (the whole payload when it fits). */
export interface FocusWindow {
  text: string;
  tokens: number;
  /** First line of the window, 0-based. */
  startLine: number;
  /** One past the last line of the window. */
  endLine: number;
  /** Lines in the payload (over-long lines count as the pieces they are cut into). */
  lines: number;
  /** True when the window is less than the whole payload. */
  truncated: boolean;
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
      lines: lines.length,
      truncated: false,
    };
  }
  const weights = new Map<string, number>();
  for (const f of focus) weights.set(f.key, Math.max(weights.get(f.key) ?? 0, f.weight));
  const lineKeys: string[][] = lines.map((l) =>
    [...new Set(rankedTerms(l))].filter((k) => weights.has(k)),
  );
  const lineTokens = lines.map((l) => count(l));

  // Sliding window over lines maximising distinct-key weight plus a small bonus per repeat.
  const inWindow = new Map<string, number>();
  let score = 0;
  let tokens = 0;
  let bestScore = -1;
  let bestLo = 0;
  let bestHi = 0;
  let lo = 0;
  for (let hi = 0; hi < lines.length; hi++) {
    for (const k of lineKeys[hi]!) {
      const w = weights.get(k)!;
      const n = inWindow.get(k) ?? 0;
      score += n === 0 ? w : w * 0.05;
      inWindow.set(k, n + 1);
    }
    tokens += lineTokens[hi]!;
    while (tokens > maxTokens && lo < hi) {
      for (const k of lineKeys[lo]!) {
        const w = weights.get(k)!;
        const n = inWindow.get(k)!;
        score -= n === 1 ? w : w * 0.05;
        inWindow.set(k, n - 1);
      }
      tokens -= lineTokens[lo]!;
      lo++;
    }
    if (tokens <= maxTokens && score >= bestScore && score > 0) {
      bestScore = score;
      bestLo = lo;
      bestHi = hi + 1;
    }
  }
  if (bestScore <= 0) {
    // Nothing to focus on: the head of the payload, as a plain chunk would give.
    bestLo = 0;
    bestHi = Math.min(1, lines.length);
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
    const down = z < lines.length && z - core.z < context && used + lineTokens[z]! <= maxTokens;
    const up = a > 0 && core.a - a < context && used + lineTokens[a - 1]! <= maxTokens;
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
  return windowOf(content, lines, a, z, maxTokens, count);
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
  maxTokens: number;
  count: (text: string) => number;
}): FocusWindow {
  const { content, maxTokens, count } = options;
  const lines = splitLines(content, maxTokens);
  const a = Math.max(0, Math.min(options.startLine, lines.length));
  const z = Math.max(a, Math.min(options.endLine, lines.length));
  return windowOf(content, lines, a, z, maxTokens, count);
}

function windowOf(
  content: string,
  lines: string[],
  a: number,
  z: number,
  maxTokens: number,
  count: (text: string) => number,
): FocusWindow {
  let text = lines.slice(a, z).join('');
  let exact = count(text);
  // Per-line counts can differ slightly from the count of the joined text: trim to the cap.
  while (exact > maxTokens && z - a > 1) {
    if (z - 1 > (a + z) / 2) z--;
    else a++;
    text = lines.slice(a, z).join('');
    exact = count(text);
  }
  // A single piece can still be over the cap (dense scripts): cut it by characters.
  while (exact > maxTokens && text.length > 0) {
    text = cutChars(text, Math.floor((text.length * maxTokens) / exact) - 1);
    exact = count(text);
  }
  const truncated = a > 0 || z < lines.length || text.length < content.length;
  return { text, tokens: exact, startLine: a, endLine: z, lines: lines.length, truncated };
}

function cutChars(text: string, n: number): string {
  let j = Math.max(0, Math.min(text.length, n));
  const c = text.charCodeAt(j - 1);
  if (j > 0 && c >= 0xd800 && c <= 0xdbff) j--;
  return text.slice(0, j);
}
