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
  // Greedy by per-unit counts, then verified against the real count of the joined chunk and
  // backed off one unit at a time: counts are not additive across unit boundaries (BPE merges;
  // the reference estimator's floor), so the estimate alone can overflow or waste the cap.
  const counts = units.map((u) => tok.count(u));
  const chunks: string[] = [];
  let i = 0;
  while (i < units.length) {
    let j = i + 1;
    let est = counts[i]!;
    while (j < units.length && est + counts[j]! <= cap) est += counts[j++]!;
    while (j - i > 1 && tok.count(units.slice(i, j).join('')) > cap) j--;
    // The estimate may also be pessimistic: take further units while the real count allows.
    while (j < units.length && tok.count(units.slice(i, j + 1).join('')) <= cap) j++;
    chunks.push(units.slice(i, j).join(''));
    i = j;
  }
  return chunks;
}
