import { isUtf8 } from 'node:buffer';
import type { PayloadSegment } from './api-types.js';
import { textPieces } from './invisible-chars.js';

/** Options of {@link payloadLines}. */
export interface PayloadLinesOptions {
  /** Show at most this many lines. */
  maxLines: number;
  /** Show at most this many bytes: the line that crosses it is cut there. */
  maxBytes: number;
  /**
   * Show at most this many segments (runs of text or hex, invisible characters): a line that
   * alternates text and invalid bytes makes one per byte or two.
   */
  maxSegments: number;
}

/** A payload as numbered lines for a person: exact text, with what cannot be shown as such marked. */
export interface PayloadLines {
  valid_utf8: boolean;
  total_lines: number;
  lines: PayloadSegment[][];
  /** Bytes of the payload the lines stand for (line breaks included). */
  shown_bytes: number;
  /** Some of the payload is not shown (lines, or the end of the last line shown). */
  truncated: boolean;
}

/** Length of the valid UTF-8 sequence at `i` (1–4), or 0 if the bytes there are not one. */
function sequenceLength(b: Uint8Array, i: number): number {
  const x = b[i]!;
  if (x < 0x80) return 1;
  const cont = (k: number, lo = 0x80, hi = 0xbf): boolean =>
    i + k < b.length && b[i + k]! >= lo && b[i + k]! <= hi;
  if (x >= 0xc2 && x <= 0xdf) return cont(1) ? 2 : 0;
  if (x >= 0xe0 && x <= 0xef) {
    const lo = x === 0xe0 ? 0xa0 : 0x80;
    const hi = x === 0xed ? 0x9f : 0xbf;
    return cont(1, lo, hi) && cont(2) ? 3 : 0;
  }
  if (x >= 0xf0 && x <= 0xf4) {
    const lo = x === 0xf0 ? 0x90 : 0x80;
    const hi = x === 0xf4 ? 0x8f : 0xbf;
    return cont(1, lo, hi) && cont(2) && cont(3) ? 4 : 0;
  }
  return 0;
}

/** Control bytes other than tab: shown as hex so NUL, CR, ESC … are visible. */
const isControl = (x: number): boolean => (x < 0x20 && x !== 0x09) || x === 0x7f;

function pushText(out: PayloadSegment[], text: string, maxSegments: number): void {
  for (const piece of textPieces(text)) {
    if (out.length >= maxSegments) return;
    out.push(piece);
  }
}

function pushHex(out: PayloadSegment[], x: number): void {
  const hex = x.toString(16).padStart(2, '0');
  const last = out[out.length - 1];
  if (last?.kind === 'hex') last.hex += ` ${hex}`;
  else out.push({ kind: 'hex', hex });
}

/** Bytes a segment stands for. */
function segmentBytes(s: PayloadSegment): number {
  if (s.kind === 'text') return Buffer.byteLength(s.text, 'utf8');
  if (s.kind === 'hex') return (s.hex.length + 1) / 3;
  return Buffer.byteLength(String.fromCodePoint(Number.parseInt(s.code.slice(2), 16)), 'utf8');
}

/** The largest cut at most `n` that does not split a valid UTF-8 sequence (`n` < length). */
function charBoundary(b: Uint8Array, n: number): number {
  let k = n;
  while (k > 0 && n - k < 3 && (b[k]! & 0xc0) === 0x80) k--;
  return k < n && k + sequenceLength(b, k) > n ? k : n;
}

/** One line's bytes (without its `\n`) as segments, at most `maxSegments` of them. */
function lineSegments(b: Uint8Array, out: PayloadSegment[], maxSegments: number): void {
  let runStart = 0;
  let i = 0;
  const flush = (end: number): void => {
    if (end > runStart) {
      pushText(out, Buffer.from(b.subarray(runStart, end)).toString('utf8'), maxSegments);
    }
  };
  while (i < b.length && out.length < maxSegments) {
    const n = sequenceLength(b, i);
    if (n > 0 && !(n === 1 && isControl(b[i]!))) {
      i += n;
      continue;
    }
    flush(i);
    pushHex(out, b[i]!);
    i++;
    runStart = i;
  }
  flush(i);
}

/**
 * Splits payload bytes into numbered lines for display: valid UTF-8 as text; invalid bytes and
 * control bytes (NUL, CR, ESC, …; not tab) as hex; invisible or reordering characters by code
 * point. A final newline ends the last line rather than starting an empty one. What is shown is
 * bounded by lines, bytes and segments, the last line shown cut if need be (`truncated`). Pure.
 *
 * @example
 * payloadLines(Buffer.from('a\r\nb\x80'), { maxLines: 100, maxBytes: 1e6, maxSegments: 1e4 });
 * // { valid_utf8: false, total_lines: 2, lines: [[text 'a', hex '0d'], [text 'b', hex '80']], … }
 */
export function payloadLines(bytes: Uint8Array, options: PayloadLinesOptions): PayloadLines {
  const lines: PayloadSegment[][] = [];
  let total = 0;
  let shownBytes = 0;
  let segments = 0;
  let start = 0;
  let truncated = false;
  const end =
    bytes.length > 0 && bytes[bytes.length - 1] === 0x0a ? bytes.length - 1 : bytes.length;
  for (;;) {
    let nl = bytes.indexOf(0x0a, start);
    if (nl === -1 || nl > end) nl = end;
    total++;
    if (
      !truncated &&
      lines.length < options.maxLines &&
      shownBytes < options.maxBytes &&
      segments < options.maxSegments
    ) {
      let line = bytes.subarray(start, nl);
      const room = options.maxBytes - shownBytes;
      if (line.length > room) line = line.subarray(0, charBoundary(line, room));
      const segs: PayloadSegment[] = [];
      lineSegments(line, segs, options.maxSegments - segments);
      lines.push(segs);
      segments += segs.length;
      const shown = segs.reduce((n, s) => n + segmentBytes(s), 0);
      if (shown < nl - start) truncated = true;
      else shownBytes += nl < bytes.length ? 1 : 0; // the line break
      shownBytes += shown;
    } else {
      truncated = true;
    }
    if (nl >= end) break;
    start = nl + 1;
  }
  return {
    valid_utf8: isUtf8(bytes),
    total_lines: total,
    lines,
    shown_bytes: shownBytes,
    truncated,
  };
}
