import { foldToken, identifiersOf } from '../extract/terms.js';
import type { IndexEntry } from '../protocol/types.js';

/**
 * The recall index held in memory as an inverted index: term → postings of dense ordinals.
 * Scan and recall touch only the postings of the query's terms, never all N nodes. Entries are
 * added incrementally as the store applies folds; a reset rebuilds it after a full reload.
 */
export class InvertedIndex {
  private steps: number[] = [];
  private entries: IndexEntry[] = [];
  private readonly ordOf = new Map<number, number>();
  private readonly postings = new Map<string, number[]>();
  private summaryTerms: (Set<string> | undefined)[] = [];
  private scratch = new Int32Array(0);

  /** Number of indexed nodes. */
  get size(): number {
    return this.steps.length;
  }

  reset(entries: Iterable<IndexEntry>): void {
    this.steps = [];
    this.entries = [];
    this.ordOf.clear();
    this.postings.clear();
    this.summaryTerms = [];
    for (const e of entries) this.add(e);
  }

  add(entry: IndexEntry): void {
    if (this.ordOf.has(entry.step_id)) return;
    const ord = this.steps.length;
    this.steps.push(entry.step_id);
    this.entries.push(entry);
    this.summaryTerms.push(undefined);
    this.ordOf.set(entry.step_id, ord);
    // The node's matching terms (identifiers ∪ folded files ∪ folded errors, as nodeTerms),
    // without sorting: posting order follows fold order either way.
    const seen = new Set<string>();
    const post = (t: string): void => {
      if (seen.has(t)) return;
      seen.add(t);
      const list = this.postings.get(t);
      if (list) list.push(ord);
      else this.postings.set(t, [ord]);
    };
    for (const t of entry.identifiers) post(t);
    for (const f of entry.files) post(foldToken(f));
    for (const e of entry.errors) post(foldToken(e));
  }

  evict(stepId: number): void {
    const ord = this.ordOf.get(stepId);
    if (ord !== undefined) this.entries[ord] = { ...this.entries[ord]!, evicted: true };
  }

  /** Step id of an ordinal. */
  stepAt(ord: number): number {
    return this.steps[ord]!;
  }

  /** Index entry of an ordinal. */
  entryAt(ord: number): IndexEntry {
    return this.entries[ord]!;
  }

  /** Postings (ordinals) of a term; empty when unknown. Do not mutate. */
  postingsOf(term: string): readonly number[] {
    return this.postings.get(term) ?? [];
  }

  /** Number of nodes holding a term (document frequency). */
  documentFrequency(term: string): number {
    return this.postings.get(term)?.length ?? 0;
  }

  /** Identifiers of a node's summary alone (recall's "summary terms"), computed once. */
  summaryTermsAt(ord: number): Set<string> {
    let s = this.summaryTerms[ord];
    if (!s) {
      s = new Set(identifiersOf(this.entries[ord]!.summary));
      this.summaryTerms[ord] = s;
    }
    return s;
  }

  /**
   * A zeroed scratch array with one slot per node, for per-query accumulation. Callers must
   * zero the slots they touched before returning (keeps each query proportional to postings).
   */
  scratchCounts(): Int32Array {
    if (this.scratch.length < this.steps.length) {
      this.scratch = new Int32Array(Math.max(1024, this.steps.length * 2));
    }
    return this.scratch;
  }
}
