/** What a byte-pair merge reads of a BPE vocabulary (gpt-tokenizer's `BytePairEncodingCore`). */
export interface BpeRanks {
  getBpeRankFromBytes(bytes: Uint8Array): number | undefined;
  getBpeRankFromBytesOrThrow(bytes: Uint8Array): number;
}

/**
 * Pieces shorter than this (in bytes) keep the library's own merge loop, which is quicker on
 * short pieces; longer ones take {@link heapMerge}.
 */
export const LONG_PIECE_BYTES = 256;

/**
 * The byte-pair merge of one pre-tokenized piece, with exactly the result of gpt-tokenizer's
 * `bytePairMerge` (repeatedly merge the adjacent pair of lowest rank, the leftmost on a tie), in
 * O(n log n): the library scans every pair and splices two arrays per merge, O(n²), so one long
 * run without a break (100,000 × "A", a line of `=`, a long base64 word) took seconds to
 * minutes to count. Pairs wait in a binary heap ordered by (rank, start); a heap entry whose
 * pair has changed since is skipped when it comes up.
 *
 * @example
 * heapMerge(core, new TextEncoder().encode('A'.repeat(100_000))); // the library's token ids
 */
export function heapMerge(ranks: BpeRanks, piece: Uint8Array): number[] {
  const n = piece.length;
  // Parts are linked by their start byte; `n` is the end sentinel.
  const next = new Int32Array(n + 1);
  const prev = new Int32Array(n + 1);
  const version = new Int32Array(n + 1);
  for (let i = 0; i <= n; i++) {
    next[i] = i + 1;
    prev[i] = i - 1;
  }
  const heap = new PairHeap();
  const push = (p: number): void => {
    const q = next[p]!;
    if (q >= n) return;
    const rank = ranks.getBpeRankFromBytes(piece.subarray(p, next[q]!));
    if (rank !== undefined) heap.push(rank, p, version[p]!);
  };
  for (let p = 0; p < n; p++) push(p);
  while (heap.size > 0) {
    const { pos: p, version: v } = heap.pop();
    if (v !== version[p]) continue;
    // Merge the part at p with the one after it.
    const q = next[p]!;
    const r = next[q]!;
    next[p] = r;
    prev[r] = p;
    version[q]!++;
    version[p]!++;
    push(p);
    const before = prev[p]!;
    if (before >= 0) {
      version[before]!++;
      push(before);
    }
  }
  const out: number[] = [];
  for (let p = 0; p < n; p = next[p]!) {
    out.push(ranks.getBpeRankFromBytesOrThrow(piece.subarray(p, next[p]!)));
  }
  return out;
}

/** A binary min-heap of (rank, pos, version) entries, ordered by rank, then pos. */
class PairHeap {
  #rank: number[] = [];
  #pos: number[] = [];
  #version: number[] = [];

  get size(): number {
    return this.#rank.length;
  }

  #less(i: number, j: number): boolean {
    const a = this.#rank[i]!;
    const b = this.#rank[j]!;
    return a < b || (a === b && this.#pos[i]! < this.#pos[j]!);
  }

  #swap(i: number, j: number): void {
    swapAt(this.#rank, i, j);
    swapAt(this.#pos, i, j);
    swapAt(this.#version, i, j);
  }

  push(rank: number, pos: number, version: number): void {
    this.#rank.push(rank);
    this.#pos.push(pos);
    this.#version.push(version);
    let i = this.#rank.length - 1;
    while (i > 0) {
      const up = (i - 1) >> 1;
      if (!this.#less(i, up)) break;
      this.#swap(i, up);
      i = up;
    }
  }

  pop(): { pos: number; version: number } {
    const top = { pos: this.#pos[0]!, version: this.#version[0]! };
    const last = this.#rank.length - 1;
    this.#swap(0, last);
    this.#rank.pop();
    this.#pos.pop();
    this.#version.pop();
    let i = 0;
    for (;;) {
      const l = 2 * i + 1;
      const r = l + 1;
      let m = i;
      if (l < last && this.#less(l, m)) m = l;
      if (r < last && this.#less(r, m)) m = r;
      if (m === i) break;
      this.#swap(i, m);
      i = m;
    }
    return top;
  }
}

function swapAt(xs: number[], i: number, j: number): void {
  const t = xs[i]!;
  xs[i] = xs[j]!;
  xs[j] = t;
}

/** Marks a processor whose merge was replaced (the replacement is installed once). */
const INSTALLED = Symbol.for('contextfold.heapMerge');

/**
 * Makes a gpt-tokenizer BPE processor merge long pieces with {@link heapMerge} (same tokens,
 * O(n log n)); shorter pieces keep the library's loop. Idempotent.
 *
 * @example
 * installHeapMerge(require('gpt-tokenizer/cjs/encoding/o200k_base').default.bytePairEncodingCoreProcessor);
 */
export function installHeapMerge(core: object): void {
  const target = core as BpeRanks & {
    bytePairMerge?: (piece: Uint8Array) => number[];
    [INSTALLED]?: true;
  };
  const own = target.bytePairMerge;
  if (typeof own !== 'function' || target[INSTALLED]) return;
  target.bytePairMerge = function (this: BpeRanks, piece: Uint8Array): number[] {
    return piece.length < LONG_PIECE_BYTES ? own.call(this, piece) : heapMerge(this, piece);
  };
  target[INSTALLED] = true;
}
