/**
 * One row of a term's postings: the steps of a batch that hold it, ascending, each with its term
 * frequency, as varints (the first step whole, then the gaps). A batch of 1,024 turns writes a
 * row per term instead of a row per (term, step): about 420 postings a turn went in as 420 rows.
 */

/** Postings decoded from a block: `steps` strictly ascending, `tfs` beside them. */
export interface PostingBlock {
  steps: number[];
  tfs: number[];
}

/** Thrown for bytes that are not a block of the announced size (a damaged index row). */
export class PostingBlockError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'PostingBlockError';
  }
}

function putVarint(out: number[], v: number): void {
  // Arithmetic rather than bit operations: steps may exceed 2^31.
  while (v >= 128) {
    out.push((v % 128) + 128);
    v = Math.floor(v / 128);
  }
  out.push(v);
}

/**
 * Encodes postings whose steps are distinct (in any order: they are sorted here) into a block.
 * Returns the bytes with the first and last step, the row's key range.
 *
 * @example
 * const b = encodePostings([7, 3], [1, 2]); // { first: 3, last: 7, data: <03 02 04 01> }
 * decodePostings(b.data, 2); // { steps: [3, 7], tfs: [2, 1] }
 */
export function encodePostings(
  steps: ArrayLike<number>,
  tfs: ArrayLike<number>,
): { first: number; last: number; data: Buffer } {
  let order: number[] | undefined;
  for (let i = 1; i < steps.length; i++) {
    if (steps[i]! <= steps[i - 1]!) {
      order = Array.from({ length: steps.length }, (_, k) => k).sort(
        (a, b) => steps[a]! - steps[b]!,
      );
      break;
    }
  }
  const out: number[] = [];
  let prev = 0;
  for (let i = 0; i < steps.length; i++) {
    const k = order ? order[i]! : i;
    const s = steps[k]!;
    putVarint(out, i === 0 ? s : s - prev);
    putVarint(out, tfs[k]!);
    prev = s;
  }
  const first = order ? steps[order[0]!]! : steps[0]!;
  return { first, last: prev, data: Buffer.from(out) };
}

/**
 * Decodes a block of `n` postings; throws {@link PostingBlockError} unless the bytes hold exactly
 * `n` postings with steps strictly ascending.
 */
export function decodePostings(data: Uint8Array, n: number): PostingBlock {
  const steps = new Array<number>(n);
  const tfs = new Array<number>(n);
  let pos = 0;
  const next = (): number => {
    let v = 0;
    let mul = 1;
    for (;;) {
      if (pos >= data.length) throw new PostingBlockError('a posting block ends mid-value');
      const b = data[pos++]!;
      v += (b & 127) * mul;
      if (b < 128) return v;
      mul *= 128;
    }
  };
  let prev = -1;
  for (let i = 0; i < n; i++) {
    const s = i === 0 ? next() : prev + next();
    if (s <= prev) throw new PostingBlockError('a posting block repeats a step');
    steps[i] = s;
    tfs[i] = next();
    prev = s;
  }
  if (pos !== data.length) throw new PostingBlockError('a posting block holds more than its count');
  return { steps, tfs };
}
