import {
  type Postings,
  PREFIX_BUCKET,
  type RankedDoc,
  type RankedIndexView,
} from './ranked-index.js';
import { parseQuery, rememberQuery } from './ranked-query.js';
import { RANKED_DEFAULTS, type RankedTuning } from './ranked-scan.js';

/** Where a ranked view reads from: a persistent index's ranked postings and statistics. */
export interface RankedSource {
  /** Analysed documents. */
  readonly size: number;
  /** Blocks of the analysed documents, and the sum of their lengths (keys with repeats). */
  readonly blocks: number;
  readonly blockLength: number;
  /** Largest analysed step (-1 when none). */
  readonly lastStep: number;
  docFrequency(key: string): number;
  /** Optional: the document frequencies of many keys, aligned with them, read together. */
  docFrequencies?(keys: readonly string[]): number[];
  /** Indexed keys longer than `prefix` that start with it. */
  keysWithPrefix(prefix: string): string[];
  /** Optional: see {@link RankedIndexView.topExtensions}. */
  topExtensions?(prefix: string, maxLength: number, limit: number): string[];
  /** Optional: {@link topExtensions} of many prefixes, aligned with them, read together. */
  topExtensionsMany?(
    asks: readonly { prefix: string; maxLength: number }[],
    limit: number,
  ): string[][];
  /** The `limit` highest steps holding a key, ascending, with term frequencies. */
  recentPostings(key: string, limit: number): { steps: readonly number[]; tfs: readonly number[] };
  /** Statistics of the analysed documents among `steps`, aligned with them (undefined: none). */
  docs(steps: readonly number[]): (RankedDoc | undefined)[];
  /** Optional: see {@link RankedIndexView.prefetch} (documents this source gave). */
  prefetch?(docs: readonly RankedDoc[]): void;
  /**
   * Optional: the numbering every view of this source shares (see {@link DocNumbering}); the
   * source gives a new one whenever a numbered step's document may change. Without it, each
   * view numbers the documents it reads on its own.
   */
  readonly numbering?: DocNumbering;
  /**
   * Optional: names what the source answers now (see `IndexBackend.readVersion`). With a
   * numbering, a view reuses the postings an earlier view of the same version mapped.
   */
  readonly readVersion?: string | undefined;
}

/**
 * The part of a persistent ranked index one prompt touches, as a {@link RankedIndexView}:
 * the prompt's keys and their expansions are looked up first, then the most recent
 * `maxPostings` postings of each matched key and the statistics of those documents and of their
 * successors (a result inherits from its call) are read, numbered densely (in the source's
 * shared numbering, if it has one: then only documents no view has read before are read). A
 * scan over it is the scan over the whole index; its cost is the postings read, however large
 * the store.
 *
 * @example
 * const r = rankedScan(rankedView(source, prompt), prompt, { perTurnCap: 3500, perCallCap: 3000 });
 */
export function rankedView(
  source: RankedSource,
  prompt: string,
  tuning: Partial<RankedTuning> = {},
): RankedIndexView {
  const t = { ...RANKED_DEFAULTS, ...tuning };
  const statistics = viewStatistics(source);
  const notYet = (): never => {
    throw new Error('rankedView: postings are read after the query is expanded');
  };
  const probe: RankedIndexView = {
    ...statistics,
    postings: notYet,
    doc: notYet,
    stepOf: notYet,
    docOf: notYet,
    scratchSlots: notYet,
  };
  const query = parseQuery(probe, prompt, t);
  const keys = new Set<string>();
  for (const q of query.keys) for (const m of q.matches) keys.add(m.key);

  const numbering = source.numbering ?? new DocNumbering();
  const known = source.numbering ? numbering.mapped(source.readVersion, t.maxPostings) : undefined;
  const postings = new Map<string, Postings>();
  const lists = new Map<string, { steps: readonly number[]; tfs: readonly number[] }>();
  for (const key of keys) {
    const p = known?.get(key);
    if (p) postings.set(key, p);
    else lists.set(key, source.recentPostings(key, t.maxPostings));
  }
  numberDocs(source, numbering, lists.values());
  for (const [key, list] of lists) {
    const p: Postings = { docs: [], tfs: [] };
    for (let i = 0; i < list.steps.length; i++) {
      const docNo = numbering.numberOf(list.steps[i]!);
      if (docNo === undefined) continue;
      p.docs.push(docNo);
      p.tfs.push(list.tfs[i]!);
    }
    postings.set(key, p);
    known?.set(key, p);
  }
  const view: RankedIndexView = {
    ...statistics,
    postings: (key) => postings.get(key),
    doc: (docNo) => numbering.doc(docNo),
    stepOf: (docNo) => numbering.stepOf(docNo),
    docOf: (step) => numbering.numberOf(step),
    scratchSlots: () => numbering.scratchSlots(),
  };
  const { prefetch } = source;
  if (prefetch) view.prefetch = (docNos) => prefetch(docNos.map((d) => numbering.doc(d)));
  rememberQuery(view, prompt, t, query);
  return view;
}

/** What a view answers before the query is expanded (and after, unchanged), memoised per view. */
function viewStatistics(
  source: RankedSource,
): Pick<
  RankedIndexView,
  | 'size'
  | 'averageBlockLength'
  | 'lastStep'
  | 'docFrequency'
  | 'knowFrequencies'
  | 'extensions'
  | 'topExtensions'
  | 'knowExtensions'
> {
  const dfs = new Map<string, number>();
  const exts = new Map<string, string[]>();
  const docFrequency = (key: string): number => {
    let df = dfs.get(key);
    if (df === undefined) {
      df = source.docFrequency(key);
      dfs.set(key, df);
    }
    return df;
  };
  const knowFrequencies = (keys: readonly string[]): void => {
    const unknown = [...new Set(keys)].filter((k) => !dfs.has(k));
    if (unknown.length === 0) return;
    const found = source.docFrequencies!(unknown);
    unknown.forEach((k, i) => {
      dfs.set(k, found[i]!);
    });
  };
  const extensions = (prefix: string): string[] => {
    if (prefix.length < PREFIX_BUCKET) return [];
    let e = exts.get(prefix);
    if (!e) {
      e = source.keysWithPrefix(prefix);
      exts.set(prefix, e);
    }
    return e;
  };
  // Only what knowExtensions read is kept here: a prompt asks once per key, and the store caches
  // the answer per process.
  const tops = new Map<string, string[]>();
  const topKey = (prefix: string, maxLength: number, limit: number) =>
    `${prefix}\u0000${maxLength}\u0000${limit}`;
  const topExtensions = (prefix: string, maxLength: number, limit: number): string[] =>
    prefix.length < PREFIX_BUCKET
      ? []
      : (tops.get(topKey(prefix, maxLength, limit)) ??
        source.topExtensions!(prefix, maxLength, limit));
  const knowExtensions = (
    asks: readonly { prefix: string; maxLength: number }[],
    limit: number,
  ): void => {
    const wanted = asks.filter((a) => a.prefix.length >= PREFIX_BUCKET);
    if (wanted.length === 0) return;
    const found = source.topExtensionsMany!(wanted, limit);
    wanted.forEach((a, i) => {
      tops.set(topKey(a.prefix, a.maxLength, limit), found[i]!);
    });
  };
  return {
    size: source.size,
    averageBlockLength: source.blocks === 0 ? 1 : Math.max(1, source.blockLength / source.blocks),
    lastStep: source.lastStep,
    docFrequency,
    ...(source.docFrequencies ? { knowFrequencies } : {}),
    extensions,
    ...(source.topExtensions ? { topExtensions } : {}),
    ...(source.topExtensions && source.topExtensionsMany ? { knowExtensions } : {}),
  };
}

/**
 * Numbers the documents of the turns that hold a read key, and of the turn after each (a result
 * inherits from its call), that `numbering` does not hold yet: only those are asked of the
 * source (in a process that scanned before, only turns no scan has read, or that have no
 * document), in the order the lists name them.
 */
function numberDocs(
  source: RankedSource,
  numbering: DocNumbering,
  lists: Iterable<{ steps: readonly number[] }>,
): void {
  const missing: number[] = [];
  const asked = new Set<number>();
  const want = (step: number): void => {
    if (numbering.numberOf(step) !== undefined || asked.has(step)) return;
    asked.add(step);
    missing.push(step);
  };
  for (const list of lists) {
    for (const s of list.steps) {
      want(s);
      want(s + 1);
    }
  }
  if (missing.length === 0) return;
  const docs = source.docs(missing);
  for (let i = 0; i < missing.length; i++) {
    const doc = docs[i];
    if (doc !== undefined) numbering.add(missing[i]!, doc);
  }
}

/** Keys whose mapped postings a numbering keeps at most before it starts over. */
const MAX_MAPPED = 8192;

/** Steps below this are numbered in a flat array (4 MB at most); larger ids (or -1) in a map. */
const FLAT_STEPS = 1 << 20;

/**
 * Documents numbered densely in the order first read, with their steps, for views to share: a
 * process that scans again finds the documents of the turns it read before already numbered,
 * so a view only maps its postings' steps (building a per-view table of steps was a fifth of a
 * warm scan at 100k turns). Numbers are only ever added, so a view built earlier stays valid. A
 * view may find numbers for turns it did not read: they hold none of its keys, which a scan
 * treats as it treats a turn that is not numbered (and the whole index numbers every turn).
 *
 * @example
 * const n = new DocNumbering();
 * n.add(37, doc); // 0
 * n.numberOf(37); // 0
 */
export class DocNumbering {
  readonly #docs: RankedDoc[] = [];
  readonly #steps: number[] = [];
  /** Per step below {@link FLAT_STEPS}: its number + 1 (0: none). */
  #flat = new Int32Array(0);
  readonly #far = new Map<number, number>();
  #scratch = new Int32Array(16);
  /** Postings views mapped to numbers, for one read version and posting limit (see `mapped`). */
  #mapped: { version: string; limit: number; lists: Map<string, Postings> } | null = null;

  /**
   * The postings views mapped for `version` with `limit` postings per key, by key, to reuse and
   * to add to (undefined: no version, nothing is kept). A new version starts an empty map: a
   * change may add a posting, or a document for a step that had none (a numbering only grows,
   * so a mapped list stays valid as long as the source is unchanged).
   */
  mapped(version: string | undefined, limit: number): Map<string, Postings> | undefined {
    if (version === undefined) return undefined;
    const m = this.#mapped;
    if (m && m.version === version && m.limit === limit && m.lists.size < MAX_MAPPED) {
      return m.lists;
    }
    this.#mapped = { version, limit, lists: new Map() };
    return this.#mapped.lists;
  }

  /** Documents numbered. */
  get size(): number {
    return this.#docs.length;
  }

  numberOf(step: number): number | undefined {
    if (step >= 0 && step < FLAT_STEPS) {
      const v = step < this.#flat.length ? this.#flat[step]! : 0;
      return v > 0 ? v - 1 : undefined;
    }
    return this.#far.get(step);
  }

  /** Numbers the document of `step` (a step already numbered keeps its number). */
  add(step: number, doc: RankedDoc): number {
    const known = this.numberOf(step);
    if (known !== undefined) return known;
    const docNo = this.#docs.length;
    this.#docs.push(doc);
    this.#steps.push(step);
    if (step >= 0 && step < FLAT_STEPS) {
      if (step >= this.#flat.length) {
        const grown = new Int32Array(Math.min(FLAT_STEPS, Math.max(1024, 2 * step + 2)));
        grown.set(this.#flat);
        this.#flat = grown;
      }
      this.#flat[step] = docNo + 1;
    } else {
      this.#far.set(step, docNo);
    }
    return docNo;
  }

  doc(docNo: number): RankedDoc {
    const d = this.#docs[docNo];
    if (d === undefined) throw new RangeError(`no ranked document ${docNo}`);
    return d;
  }

  stepOf(docNo: number): number {
    const s = this.#steps[docNo];
    if (s === undefined) throw new RangeError(`no ranked document ${docNo}`);
    return s;
  }

  /** A zeroed array of a slot per numbered document, shared (callers zero what they set). */
  scratchSlots(): Int32Array {
    if (this.#scratch.length < this.#docs.length) {
      this.#scratch = new Int32Array(2 * this.#docs.length);
    }
    return this.#scratch;
  }
}
