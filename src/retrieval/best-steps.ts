// Top-k selection of candidate steps by score: a scan keeps its best few hundred of thousands of
// pre-scored steps, and sorting them all was a visible part of a warm scan.

/**
 * The `limit` steps with the highest `score`, best first, ties broken by the later step: the
 * same as sorting every step and keeping the first `limit`, without sorting them all (the
 * cut-off score is selected in linear time, then only the steps at or above it are sorted).
 *
 * @example
 * bestSteps([3, 5, 7], Float64Array.from([0.2, 0.9, 0.2]), 2); // [5, 7]
 */
export function bestSteps(steps: readonly number[], score: Float64Array, limit: number): number[] {
  const n = steps.length;
  if (limit <= 0) return [];
  const kept: number[] = [];
  if (n > limit) {
    const cut = nthSmallest(score, n, n - limit);
    for (let i = 0; i < n; i++) if (score[i]! >= cut) kept.push(i);
  } else {
    for (let i = 0; i < n; i++) kept.push(i);
  }
  kept.sort((i, j) => score[j]! - score[i]! || steps[j]! - steps[i]!);
  const out = new Array<number>(Math.min(limit, kept.length));
  for (let i = 0; i < out.length; i++) out[i] = steps[kept[i]!]!;
  return out;
}

/** Scratch copy of the scores {@link nthSmallest} partitions (reused: a scan selects once). */
let selectScratch = new Float64Array(1024);

/**
 * The value at index `k` of the first `n` values of `values` sorted ascending (Hoare's
 * selection on a scratch copy, median-of-three pivots): what a full sort would put there.
 */
function nthSmallest(values: Float64Array, n: number, k: number): number {
  if (selectScratch.length < n) selectScratch = new Float64Array(2 * n);
  const a = selectScratch;
  a.set(values.subarray(0, n));
  let lo = 0;
  let hi = n - 1;
  while (hi > lo) {
    const mid = (lo + hi) >> 1;
    const pivot = median3(a[lo]!, a[mid]!, a[hi]!);
    let i = lo;
    let j = hi;
    while (i <= j) {
      while (a[i]! < pivot) i++;
      while (a[j]! > pivot) j--;
      if (i <= j) {
        const x = a[i]!;
        a[i++] = a[j]!;
        a[j--] = x;
      }
    }
    if (k <= j) hi = j;
    else if (k >= i) lo = i;
    else return a[k]!;
  }
  return a[k]!;
}

function median3(x: number, y: number, z: number): number {
  return Math.max(Math.min(x, y), Math.min(Math.max(x, y), z));
}
