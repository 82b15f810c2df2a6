import { identifiersOf } from '../extract/terms.js';
import type { IndexEntry } from '../protocol/types.js';
import type { TermIndexReader } from './inverted-index.js';

/** Steps numbered through a typed array (4 bytes each) at most; larger step ids go through a Map. */
const DENSE_STEPS = 1 << 24;

/** Where a {@link TermView} reads from: a persistent index's reference postings and entries. */
export interface TermSource {
  /** Steps whose entry holds a term (identifiers ∪ folded files ∪ folded errors), ascending. */
  postings(term: string): readonly number[];
  /** The entry of an indexed step. */
  entry(step: number): IndexEntry;
}

/**
 * The part of a persistent index one RGSC scan or recall touches: the postings of its terms,
 * numbered densely, and the entries of the candidates it returns (read on demand). Cost is the
 * postings read, never the number of entries.
 *
 * @example
 * referenceScan(new TermView(source), 'Which port for PostgreSQL?', budget);
 */
export class TermView implements TermIndexReader {
  readonly #source: TermSource;
  readonly #steps: number[] = [];
  /** Ordinal + 1 of each step the array covers (0: not seen); a Map for the others. */
  #dense = new Int32Array(0);
  readonly #sparse = new Map<number, number>();
  readonly #postings = new Map<string, number[]>();
  readonly #entries: (IndexEntry | undefined)[] = [];
  readonly #summaries: (Set<string> | undefined)[] = [];

  constructor(source: TermSource) {
    this.#source = source;
  }

  prepare(terms: readonly string[]): void {
    for (const t of terms) {
      if (this.#postings.has(t)) continue;
      const list = this.#source.postings(t);
      // A common term holds most of a large store's steps: numbering them through an array
      // indexed by step, not a hash map, is most of what a reference scan costs at 100k.
      // The array stays within a few times the steps numbered, so sparse ids cost no memory.
      const top = list.length > 0 ? list[list.length - 1]! : -1;
      const cap = Math.min(DENSE_STEPS, 8 * (this.#steps.length + list.length) + 1024);
      if (top < cap && top >= this.#dense.length) {
        const grown = new Int32Array(Math.min(cap, Math.max(top + 1, this.#dense.length * 2)));
        grown.set(this.#dense);
        this.#dense = grown;
      }
      const dense = this.#dense;
      const ords = new Array<number>(list.length);
      for (let i = 0; i < list.length; i++) {
        const step = list[i]!;
        let ord = step < dense.length ? dense[step]! - 1 : -1;
        // A step numbered before the array grew past it is still in the map.
        if (ord < 0 && this.#sparse.size > 0) ord = this.#sparse.get(step) ?? -1;
        if (ord < 0) {
          ord = this.#steps.length;
          this.#steps.push(step);
          if (step < dense.length) dense[step] = ord + 1;
          else this.#sparse.set(step, ord);
        }
        ords[i] = ord;
      }
      this.#postings.set(t, ords);
    }
  }

  stepAt(ord: number): number {
    return this.#steps[ord]!;
  }

  entryAt(ord: number): IndexEntry {
    let e = this.#entries[ord];
    if (!e) {
      e = this.#source.entry(this.#steps[ord]!);
      this.#entries[ord] = e;
    }
    return e;
  }

  postingsOf(term: string): readonly number[] {
    if (!this.#postings.has(term)) this.prepare([term]);
    return this.#postings.get(term)!;
  }

  summaryTermsAt(ord: number): Set<string> {
    let s = this.#summaries[ord];
    if (!s) {
      s = new Set(identifiersOf(this.entryAt(ord).summary));
      this.#summaries[ord] = s;
    }
    return s;
  }

  scratchCounts(): Int32Array {
    return new Int32Array(Math.max(16, this.#steps.length));
  }
}
