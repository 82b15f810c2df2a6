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
 * A counter of spans `[i, j)` equal to `direct(i, j)`, given ascending `bounds` (the first
 * and last ends of the whole, and split points between) where, for any span holding a bound
 * strictly inside, the count is the sum of the counts of the two sides: each segment between
 * bounds is counted once, and a span is the sum of its whole segments plus direct counts of
 * its two partial ends.
 */
export function splitSumCounter(
  bounds: readonly number[],
  direct: (i: number, j: number) => number,
): (i: number, j: number) => number {
  const sums = [0];
  for (let b = 0; b + 1 < bounds.length; b++)
    sums.push(sums[b]! + direct(bounds[b]!, bounds[b + 1]!));
  return (i, j) => {
    const lo = lowerBound(bounds, i);
    const hi = lowerBound(bounds, j + 1) - 1;
    if (lo > hi) return direct(i, j);
    let n = sums[hi]! - sums[lo]!;
    if (i < bounds[lo]!) n += direct(i, bounds[lo]!);
    if (bounds[hi]! < j) n += direct(bounds[hi]!, j);
    return n;
  };
}
