import { compareCodePoints } from '../protocol/canonical-json.js';
import type { IndexEntry } from '../protocol/types.js';
import type { DocStats, PostingList } from './index-backend.js';
import type { StoredAnalysis } from './index-db.js';

/** Cached postings of one term: the most recent `limit` (all of them when undefined). */
interface CachedList {
  limit: number | undefined;
  steps: number[];
  tfs: number[];
}

/** Entries kept parsed at most (a cache, never the index). */
const MAX_ENTRIES = 4096;
/** Ranked document statistics kept at most. */
const MAX_DOCS = 16_384;
/**
 * Postings kept at most, over all cached lists (at most 64 MB as two number arrays). A
 * reference-mode scan reads whole lists: the 20 synth prompts at 100k turns read 3.4 million
 * postings, so a smaller cache was emptied and refilled on every pass.
 */
const MAX_POSTINGS = 4_000_000;

const key = (field: number, term: string) => `${field}\u0000${term}`;

/**
 * What one process has read from one index generation, kept in step with the index's change
 * feed: parsed entries, document frequencies, posting lists, prefix expansions and ranked
 * document statistics. A long-lived process (a server) answers repeated scans from memory;
 * every fold anywhere updates exactly the lists it touches. Bounded; cleared when the index is
 * rebuilt (its generation or epoch changes).
 */
export class ReadCache {
  /** Index generation and epoch the cache belongs to. */
  generation: string | null = null;
  /** Last change applied. */
  seq = 0;
  readonly #entries = new Map<number, IndexEntry>();
  readonly #df = new Map<string, number>();
  readonly #lists = new Map<string, CachedList>();
  readonly #prefixes = new Map<string, string[]>();
  readonly #tops = new Map<string, string[]>();
  readonly #docs = new Map<number, DocStats>();
  #postings = 0;
  /**
   * The largest analysed step (the ranked field's `lastStep`), while no change has been
   * followed since it was read: a warm scan asks for it every time.
   */
  lastDocStep: number | undefined = undefined;

  /** Forgets everything (a new generation, or too many changes to follow). */
  reset(generation: string, seq: number): void {
    this.generation = generation;
    this.seq = seq;
    this.#entries.clear();
    this.#df.clear();
    this.#lists.clear();
    this.#prefixes.clear();
    this.#tops.clear();
    this.#docs.clear();
    this.#postings = 0;
    this.lastDocStep = undefined;
  }

  /** True when nothing term-related is cached (changes then need no reading). */
  get holdsTerms(): boolean {
    return (
      this.#lists.size > 0 || this.#df.size > 0 || this.#prefixes.size > 0 || this.#tops.size > 0
    );
  }

  entry(step: number): IndexEntry | undefined {
    return this.#entries.get(step);
  }

  putEntry(entry: IndexEntry): void {
    if (this.#entries.size >= MAX_ENTRIES) this.#entries.clear();
    this.#entries.set(entry.step_id, entry);
  }

  forgetEntry(step: number): void {
    this.#entries.delete(step);
  }

  df(field: number, term: string): number | undefined {
    return this.#df.get(key(field, term));
  }

  putDf(field: number, term: string, df: number): void {
    this.#df.set(key(field, term), df);
  }

  /** A cached list that answers a request for `limit` postings (undefined: all), if any. */
  postings(field: number, term: string, limit: number | undefined): PostingList | undefined {
    const c = this.#lists.get(key(field, term));
    if (!c) return undefined;
    if (c.limit !== undefined && (limit === undefined || limit > c.limit)) return undefined;
    if (limit === undefined || c.steps.length <= limit) return { steps: c.steps, tfs: c.tfs };
    return { steps: c.steps.slice(-limit), tfs: c.tfs.slice(-limit) };
  }

  putPostings(field: number, term: string, limit: number | undefined, list: PostingList): void {
    if (this.#postings + list.steps.length > MAX_POSTINGS) {
      this.#lists.clear();
      this.#postings = 0;
    }
    // A list shorter than its limit is the whole list.
    const whole = limit === undefined || list.steps.length < limit;
    this.#lists.set(key(field, term), {
      limit: whole ? undefined : limit,
      steps: [...list.steps],
      tfs: [...list.tfs],
    });
    this.#postings += list.steps.length;
  }

  prefix(field: number, prefix: string): string[] | undefined {
    return this.#prefixes.get(key(field, prefix));
  }

  putPrefix(field: number, prefix: string, terms: string[]): void {
    this.#prefixes.set(key(field, prefix), terms);
  }

  /** A cached {@link IndexBackend.topTermsWithPrefix} answer. */
  top(field: number, prefix: string, maxLength: number, limit: number): string[] | undefined {
    return this.#tops.get(`${key(field, prefix)}\u0000${maxLength}\u0000${limit}`);
  }

  putTop(field: number, prefix: string, maxLength: number, limit: number, terms: string[]): void {
    this.#tops.set(`${key(field, prefix)}\u0000${maxLength}\u0000${limit}`, terms);
  }

  doc(step: number): DocStats | undefined {
    return this.#docs.get(step);
  }

  putDoc(doc: DocStats): void {
    if (this.#docs.size >= MAX_DOCS) this.#docs.clear();
    this.#docs.set(doc.step, doc);
  }

  /** A step now holds these terms of a field: frequencies, lists and prefixes follow. */
  addPostings(field: number, step: number, terms: readonly string[], tfs: readonly number[]) {
    // Any new posting may reorder the most frequent extensions of some prefix.
    if (terms.length > 0) this.#tops.clear();
    for (let i = 0; i < terms.length; i++) {
      const term = terms[i]!;
      const k = key(field, term);
      const df = this.#df.get(k);
      if (df !== undefined) this.#df.set(k, df + 1);
      // A term that may be new to the index joins the cached expansions of its prefixes.
      if (!df && this.#prefixes.size > 0) this.#notePrefixes(field, term);
      const c = this.#lists.get(k);
      if (c) this.#insert(c, step, tfs[i]!);
    }
  }

  #notePrefixes(field: number, term: string): void {
    for (let n = term.length - 1; n >= 1; n--) {
      const list = this.#prefixes.get(key(field, term.slice(0, n)));
      if (list && !list.includes(term)) {
        list.push(term);
        list.sort(compareCodePoints);
      }
    }
  }

  #insert(c: CachedList, step: number, tf: number): void {
    let at = c.steps.length;
    while (at > 0 && c.steps[at - 1]! > step) at--;
    if (c.steps[at - 1] === step) return;
    c.steps.splice(at, 0, step);
    c.tfs.splice(at, 0, tf);
    this.#postings++;
    if (c.limit !== undefined && c.steps.length > c.limit) {
      c.steps.shift();
      c.tfs.shift();
      this.#postings--;
    }
  }

  /** An analysed document joined the ranked field. */
  addDoc(field: number, step: number, a: StoredAnalysis): void {
    this.#docs.set(step, { step, length: a.length });
    this.addPostings(field, step, a.terms, a.tfs);
  }
}
