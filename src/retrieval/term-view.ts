import { identifiersOf } from '../extract/terms.js';
import type { IndexEntry } from '../protocol/types.js';
import type { TermIndexReader } from './inverted-index.js';

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
  readonly #ordOf = new Map<number, number>();
  readonly #postings = new Map<string, number[]>();
  readonly #entries: (IndexEntry | undefined)[] = [];
  readonly #summaries: (Set<string> | undefined)[] = [];

  constructor(source: TermSource) {
    this.#source = source;
  }

  prepare(terms: readonly string[]): void {
    for (const t of terms) {
      if (this.#postings.has(t)) continue;
      const ords: number[] = [];
      for (const step of this.#source.postings(t)) {
        let ord = this.#ordOf.get(step);
        if (ord === undefined) {
          ord = this.#steps.length;
          this.#steps.push(step);
          this.#ordOf.set(step, ord);
        }
        ords.push(ord);
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
