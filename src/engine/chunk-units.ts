// The units hydrate's chunks are cut from: lines, and pieces of a line over the cap. Kept as
// offsets into the payload with one count each, so the chunker slices the payload instead of
// joining strings, and counts no line twice.
import { isSafeSplitInLine } from '../extract/safe-split-in-line.js';
import { countUpTo, type Tokenizer } from '../extract/tokenizer.js';
import { type SpanCount, splitSumCounter } from './split-sum.js';

/** A payload's units: unit `k` is `text.slice(offsets[k], offsets[k + 1])`, of `counts[k]` tokens. */
export interface ChunkUnits {
  readonly offsets: number[];
  readonly counts: number[];
}

/** Code-unit offsets of a line's code points, and the line's length last. */
function codePointStarts(line: string): number[] {
  const starts: number[] = [];
  for (let k = 0; k < line.length; k++) {
    const c = line.charCodeAt(k);
    starts.push(k);
    // A high surrogate followed by a low one is one code point.
    if (c >= 0xd800 && c <= 0xdbff && k + 1 < line.length) {
      const d = line.charCodeAt(k + 1);
      if (d >= 0xdc00 && d <= 0xdfff) k++;
    }
  }
  starts.push(line.length);
  return starts;
}

/** The shortest segment (in code units) between two split points a line's counter sums. */
const MIN_SEGMENT = 64;

/**
 * Tokens of `line.slice(a, b)` by code-unit offsets: summed across the splits where o200k's
 * counts add (`isSafeSplitInLine`) for a tokenizer that declares them, else counted.
 */
function lineSpanCounter(line: string, at: readonly number[], tok: Tokenizer): SpanCount {
  const direct = (a: number, b: number, limit = Number.POSITIVE_INFINITY): number =>
    countUpTo(tok, line.slice(a, b), limit);
  if (!tok.additiveAtLineStarts) return direct;
  // Splits closer than this to the last one kept are skipped: hex or minified code has one every
  // few characters, and a count per segment that short costs more in calls than in tokens.
  const bounds = [0];
  for (let k = 1; k < at.length - 1; k++) {
    const q = at[k]!;
    if (q - bounds[bounds.length - 1]! >= MIN_SEGMENT && isSafeSplitInLine(line, q)) bounds.push(q);
  }
  bounds.push(line.length);
  return splitSumCounter(bounds, direct);
}

/**
 * Cuts a single over-long line into pieces of at most `cap` tokens, at code-point boundaries,
 * by binary search on the code-point count of each piece; returns each piece's length and
 * count (from the same counter, so no piece is counted from scratch again). Each probe asks
 * only whether a piece fits, so a tokenizer that stops counting past the cap
 * (`Tokenizer.countUpTo`) spends about a piece's worth of text on it, not the rest of the line:
 * a line of megabytes without a split point is cut in time linear in its length, times the
 * search's steps.
 */
function splitLongLine(
  line: string,
  cap: number,
  tok: Tokenizer,
): { length: number; count: number }[] {
  const at = codePointStarts(line);
  const count = lineSpanCounter(line, at, tok);
  const cps = at.length - 1;
  const pieces: { length: number; count: number }[] = [];
  let i = 0;
  while (i < cps) {
    let lo = 1;
    let hi = cps - i;
    while (lo < hi) {
      const mid = (lo + hi + 1) >> 1;
      if (count(at[i]!, at[i + mid]!, cap) <= cap) lo = mid;
      else hi = mid - 1;
    }
    // Exact when the piece fits; a single code point over the cap is counted in full.
    let n = count(at[i]!, at[i + lo]!, cap);
    if (n > cap) n = count(at[i]!, at[i + lo]!);
    pieces.push({ length: at[i + lo]! - at[i]!, count: n });
    i += lo;
  }
  return pieces;
}

/**
 * Splits a payload into lines (each keeping its `\n`; CRLF stays whole) and cuts a line over
 * `cap` tokens into pieces within it, counting each unit once.
 */
export function chunkUnits(text: string, cap: number, tok: Tokenizer): ChunkUnits {
  const offsets: number[] = [0];
  const counts: number[] = [];
  let start = 0;
  while (start < text.length) {
    const nl = text.indexOf('\n', start);
    const end = nl === -1 ? text.length : nl + 1;
    const line = text.slice(start, end);
    // A line far over the cap is not counted to its end: it is cut into pieces next.
    const n = countUpTo(tok, line, cap);
    if (n <= cap) {
      offsets.push(end);
      counts.push(n);
    } else {
      let at = start;
      for (const piece of splitLongLine(line, cap, tok)) {
        counts.push(piece.count);
        at += piece.length;
        offsets.push(at);
      }
    }
    start = end;
  }
  return { offsets, counts };
}
