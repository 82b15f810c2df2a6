import { foldToken, identifiersOf } from '../extract/terms.js';
import type { IndexEntry } from '../protocol/types.js';

/** Queries answered by a linear pass before the full postings are built. */
const LAZY_QUERIES = 2;

/** The matching terms of an entry (identifiers ∪ folded files ∪ folded errors; may repeat). */
function* termsOf(entry: IndexEntry): Generator<string> {
  yield* entry.identifiers;
  for (const f of entry.files) yield foldToken(f);
  for (const e of entry.errors) yield foldToken(e);
}

/**
 * What RGSC and recall read from an index: postings of the query's terms as dense ordinals,
 * the step and entry of an ordinal, and a scratch array. {@link InvertedIndex} holds every entry
 * in memory; a view over a persistent index (`term-view.ts`) holds only one query's postings.
 */
export interface TermIndexReader {
  /** Makes the postings of `terms` available (call before reading them). */
  prepare(terms: readonly string[]): void;
  stepAt(ord: number): number;
  entryAt(ord: number): IndexEntry;
  /** Postings (ordinals) of a prepared term; empty when unknown. */
  postingsOf(term: string): readonly number[];
  /** Identifiers of an entry's summary alone (recall's "summary terms"). */
  summaryTermsAt(ord: number): Set<string>;
  /** A zeroed array with one slot per ordinal (callers re-zero what they set). */
  scratchCounts(): Int32Array;
}

/**
 * The recall index held in memory as an inverted index: term → postings of dense ordinals.
 * Scan and recall touch only the postings of the query's terms, never all N nodes. Entries are
 * added incrementally as the store applies folds; a reset rebuilds it after a full reload.
 *
 * The full postings are built lazily: a process that answers one or two queries (a CLI call,
 * a hook) gets their terms' postings from one linear pass over the entries instead of paying
 * for every term of every node; from the third query on, the whole index is built once.
 */
export class InvertedIndex implements TermIndexReader {
  private steps: number[] = [];
  private entries: IndexEntry[] = [];
  private readonly ordOf = new Map<number, number>();
  private readonly postings = new Map<string, number[]>();
  private built = false;
  private queries = 0;
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
    this.built = false;
    this.queries = 0;
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
    this.post(entry, ord, !this.built);
  }

  /**
   * Adds an entry's ordinal to its terms' postings (posting order follows fold order). With
   * `knownOnly`, only to terms whose postings exist already (the lazily prepared ones).
   */
  private post(entry: IndexEntry, ord: number, knownOnly: boolean): void {
    for (const t of termsOf(entry)) {
      const list = this.postings.get(t);
      if (list) {
        if (list[list.length - 1] !== ord) list.push(ord);
      } else if (!knownOnly) {
        this.postings.set(t, [ord]);
      }
    }
  }

  /**
   * Makes the postings of `terms` available: by one linear pass for the first few queries of
   * an unbuilt index, else by building every term's postings once.
   */
  prepare(terms: readonly string[]): void {
    if (this.built) return;
    if (++this.queries > LAZY_QUERIES) {
      this.postings.clear();
      for (let ord = 0; ord < this.entries.length; ord++) this.post(this.entries[ord]!, ord, false);
      this.built = true;
      return;
    }
    const wanted = new Set(terms.filter((t) => !this.postings.has(t)));
    if (wanted.size === 0) return;
    for (const t of wanted) this.postings.set(t, []);
    for (let ord = 0; ord < this.entries.length; ord++) {
      for (const t of termsOf(this.entries[ord]!)) {
        if (!wanted.has(t)) continue;
        const list = this.postings.get(t)!;
        if (list[list.length - 1] !== ord) list.push(ord);
      }
    }
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
    if (!this.built && !this.postings.has(term)) this.prepare([term]);
    return this.postings.get(term) ?? [];
  }

  /** Number of nodes holding a term (document frequency). */
  documentFrequency(term: string): number {
    return this.postingsOf(term).length;
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
