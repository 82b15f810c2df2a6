// Counts of spans summed from segments between split points where counts add, so a span is
// counted once per segment however often the chunker asks for it.

/** Index of the first of the ascending `xs` at least `v` (`xs.length` if none). */
function lowerBound(xs: readonly number[], v: number): number {
  let lo = 0;
  let hi = xs.length;
  while (lo < hi) {
    const mid = (lo + hi) >> 1;
    if (xs[mid]! < v) lo = mid + 1;
    else hi = mid;
  }
  return lo;
}

/**
 * A span counter: the count of `[i, j)` when it is at most `limit` (default: no limit), else any
 * number over `limit` (see `Tokenizer.countUpTo`).
 */
export type SpanCount = (i: number, j: number, limit?: number) => number;

/**
 * A counter of spans `[i, j)` equal to `direct(i, j)` (up to a limit, as {@link SpanCount}),
 * given ascending `bounds` (the first and last ends of the whole, and split points between)
 * where, for any span holding a bound strictly inside, the count is the sum of the counts of
 * the two sides: each segment between bounds is counted once, and a span is the sum of its
 * whole segments plus direct counts of its two partial ends.
 */
export function splitSumCounter(
  bounds: readonly number[],
  direct: (i: number, j: number, limit: number) => number,
): SpanCount {
  const sums = [0];
  for (let b = 0; b + 1 < bounds.length; b++)
    sums.push(sums[b]! + direct(bounds[b]!, bounds[b + 1]!, Number.POSITIVE_INFINITY));
  return (i, j, limit = Number.POSITIVE_INFINITY) => {
    const lo = lowerBound(bounds, i);
    const hi = lowerBound(bounds, j + 1) - 1;
    if (lo > hi) return direct(i, j, limit);
    let n = sums[hi]! - sums[lo]!;
    if (n <= limit && i < bounds[lo]!) n += direct(i, bounds[lo]!, limit - n);
    if (n <= limit && bounds[hi]! < j) n += direct(bounds[hi]!, j, limit - n);
    return n;
  };
}
