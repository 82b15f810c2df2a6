import type { Tokenizer } from '../extract/tokenizer.js';

/** Splits text into lines, each keeping its terminator (`\n`; CRLF stays whole). */
function splitLines(text: string): string[] {
  const out: string[] = [];
  let start = 0;
  for (;;) {
    const nl = text.indexOf('\n', start);
    if (nl === -1) break;
    out.push(text.slice(start, nl + 1));
    start = nl + 1;
  }
  if (start < text.length) out.push(text.slice(start));
  return out;
}

/** Cuts a single over-long line into pieces of at most `cap` tokens, at code-point boundaries. */
function splitLongLine(line: string, cap: number, tok: Tokenizer): string[] {
  const cps = Array.from(line);
  const pieces: string[] = [];
  let i = 0;
  while (i < cps.length) {
    // Largest prefix of cps[i..] within the cap, by binary search on the code-point count.
    let lo = 1;
    let hi = cps.length - i;
    while (lo < hi) {
      const mid = (lo + hi + 1) >> 1;
      if (tok.count(cps.slice(i, i + mid).join('')) <= cap) lo = mid;
      else hi = mid - 1;
    }
    pieces.push(cps.slice(i, i + lo).join(''));
    i += lo;
  }
  return pieces;
}

/**
 * Cuts a payload into chunks of at most `cap` tokens, at line boundaries (a line longer than
 * the cap is cut within itself). Deterministic; the chunks concatenate to the exact text.
 *
 * @example
 * chunkText('a\nb\n', 1, referenceTokenizer); // ['a\n', 'b\n']
 */
export function chunkText(text: string, cap: number, tok: Tokenizer): string[] {
  if (tok.count(text) <= cap) return [text];
  const units: string[] = [];
  for (const line of splitLines(text)) {
    if (tok.count(line) <= cap) units.push(line);
    else units.push(...splitLongLine(line, cap, tok));
  }
  const groups: string[][] = [];
  let cur: string[] = [];
  let est = 0;
  for (const u of units) {
    const n = tok.count(u);
    if (cur.length > 0 && est + n > cap) {
      groups.push(cur);
      cur = [];
      est = 0;
    }
    cur.push(u);
    est += n;
  }
  if (cur.length > 0) groups.push(cur);
  // Token counts are not exactly additive across line boundaries: verify every chunk and halve
  // any that came out over the cap.
  const chunks: string[] = [];
  const emit = (g: string[]): void => {
    const text = g.join('');
    if (g.length === 1 || tok.count(text) <= cap) {
      chunks.push(text);
      return;
    }
    const mid = g.length >> 1;
    emit(g.slice(0, mid));
    emit(g.slice(mid));
  };
  for (const g of groups) emit(g);
  return chunks;
}
