// A fold batch's postings gathered by term in flat columns: three arrays for the whole batch
// instead of an object and two arrays per term. A round of 1,024 turns has about 56,000 terms,
// most of them seen once, and those small arrays were much of a fold's garbage.

/** Postings of one term range: term `t`'s are `steps`/`tfs` from `start[t]` to `start[t + 1]`. */
export interface PostingsByTerm {
  start: Float64Array;
  steps: Float64Array;
  tfs: Float64Array;
}

/** The postings of one field of a batch, by term, terms in the order they were first added. */
export class BatchPostings {
  readonly #index = new Map<string, number>();
  /** The terms, in the order first added. */
  readonly terms: string[] = [];
  /** Postings of each term (its document frequency in the batch), beside `terms`. */
  readonly counts: number[] = [];
  readonly #term: number[] = [];
  readonly #steps: number[] = [];
  readonly #tfs: number[] = [];

  add(term: string, step: number, tf: number): void {
    let t = this.#index.get(term);
    if (t === undefined) {
      t = this.terms.length;
      this.#index.set(term, t);
      this.terms.push(term);
      this.counts.push(0);
    }
    this.counts[t]!++;
    this.#term.push(t);
    this.#steps.push(step);
    this.#tfs.push(tf);
  }

  /** The postings ordered by term, each term's in the order added (a stable counting sort). */
  byTerm(): PostingsByTerm {
    const n = this.terms.length;
    const start = new Float64Array(n + 1);
    for (let t = 0; t < n; t++) start[t + 1] = start[t]! + this.counts[t]!;
    const at = start.slice(0, n);
    const total = this.#term.length;
    const steps = new Float64Array(total);
    const tfs = new Float64Array(total);
    for (let i = 0; i < total; i++) {
      const k = at[this.#term[i]!]!++;
      steps[k] = this.#steps[i]!;
      tfs[k] = this.#tfs[i]!;
    }
    return { start, steps, tfs };
  }
}
