import { countUpTo, type Tokenizer } from '../extract/tokenizer.js';
import { asciiCounting } from './ascii-counting.js';
import { chunkUnits } from './chunk-units.js';
import { type UnitRangeCount, unitRangeCounter } from './unit-range-count.js';

/**
 * The end (exclusive) of the chunk starting at unit `i`: greedy by per-unit counts, then
 * checked against the real count of the run and backed off one unit at a time (counts are not
 * additive across every unit boundary: BPE merges, the reference estimator's floor), then
 * extended while the real count allows (the estimate may also be pessimistic).
 */
function chunkEnd(
  i: number,
  counts: readonly number[],
  cap: number,
  count: UnitRangeCount,
): number {
  const n = counts.length;
  let j = i + 1;
  let est = counts[i]!;
  while (j < n && est + counts[j]! <= cap) est += counts[j++]!;
  let over = -1;
  while (j - i > 1 && count(i, j, cap) > cap) over = j--;
  // After a back-off, the run one unit further was just counted over the cap.
  if (over === j + 1) return j;
  while (j < n && count(i, j + 1, cap) <= cap) j++;
  return j;
}

/**
 * Cuts a payload into chunks of at most `cap` tokens, at line boundaries (a line longer than
 * the cap is cut within itself). Deterministic; the chunks concatenate to the exact text.
 *
 * @example
 * chunkText('a\nb\n', 1, referenceTokenizer); // ['a\n', 'b\n']
 */
export function chunkText(text: string, cap: number, tok: Tokenizer): string[] {
  if (countUpTo(tok, text, cap) <= cap) return [text];
  const counting = asciiCounting(tok);
  const units = chunkUnits(text, cap, counting);
  const count = unitRangeCounter(text, units, counting);
  const { offsets, counts } = units;
  const chunks: string[] = [];
  for (let i = 0; i < counts.length; ) {
    const j = chunkEnd(i, counts, cap, count);
    chunks.push(text.slice(offsets[i], offsets[j]));
    i = j;
  }
  return chunks;
}
