// The token count of a run of chunk units, as the chunker asks for it several times per chunk
// (the estimate's check, the back-off, the look one unit further). Counting each join again
// cost about three tokenizer passes over a payload; a tokenizer whose counts add across a safe
// line start is counted once per block between such starts, and a run is the sum of its
// blocks plus a count of its edges.
import { isSafeLineStart } from '../extract/safe-line-start.js';
import { countUpTo, type Tokenizer } from '../extract/tokenizer.js';
import type { ChunkUnits } from './chunk-units.js';
import { type SpanCount, splitSumCounter } from './split-sum.js';

/**
 * Tokens of units `i` (inclusive) to `j` (exclusive), `i < j`: exactly `tok.count` of their join
 * when it is at most `limit` (default: no limit), else a number over `limit`.
 */
export type UnitRangeCount = SpanCount;

/** Unit indices where a block starts or ends: 0, each safe line start, and the unit count. */
function blockBounds(text: string, { offsets }: ChunkUnits): number[] {
  const n = offsets.length - 1;
  const bounds = [0];
  for (let k = 1; k < n; k++)
    if (isSafeLineStart(text, offsets[k]!, offsets[k + 1]!)) bounds.push(k);
  if (n > 0) bounds.push(n);
  return bounds;
}

/**
 * A counter of unit runs that equals `tok.count` of their join: a direct count, or for a
 * tokenizer `additiveAtLineStarts`, sums of block counts made once (blocks meet at safe line
 * starts, where the counts of both sides add) and direct counts of the partial blocks at the
 * run's two ends.
 */
export function unitRangeCounter(text: string, units: ChunkUnits, tok: Tokenizer): UnitRangeCount {
  const { offsets, counts } = units;
  const direct = (i: number, j: number, limit = Number.POSITIVE_INFINITY): number =>
    j - i === 1 ? counts[i]! : countUpTo(tok, text.slice(offsets[i], offsets[j]), limit);
  if (!tok.additiveAtLineStarts) return direct;
  return splitSumCounter(blockBounds(text, units), direct);
}
