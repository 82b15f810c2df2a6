import {
  type Postings,
  PREFIX_BUCKET,
  type RankedDoc,
  type RankedIndexView,
} from './ranked-index.js';
import { parseQuery } from './ranked-query.js';
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
  /** Indexed keys longer than `prefix` that start with it. */
  keysWithPrefix(prefix: string): string[];
  /** Optional: see {@link RankedIndexView.topExtensions}. */
  topExtensions?(prefix: string, maxLength: number, limit: number): string[];
  /** The `limit` highest steps holding a key, ascending, with term frequencies. */
  recentPostings(key: string, limit: number): { steps: readonly number[]; tfs: readonly number[] };
  /** Statistics of the analysed documents among `steps`, aligned with them (undefined: none). */
  docs(steps: readonly number[]): (RankedDoc | undefined)[];
}

/**
 * The part of a persistent ranked index one prompt touches, as a {@link RankedIndexView}:
 * the prompt's keys and their expansions are looked up first, then the most recent
 * `maxPostings` postings of each matched key and the statistics of those documents and of their
 * successors (a result inherits from its call) are read, numbered densely. A scan over it is
 * the scan over the whole index; its cost is the postings read, however large the store.
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
  const keys = new Set<string>();
  for (const q of parseQuery(probe, prompt, t).keys) for (const m of q.matches) keys.add(m.key);

  const lists = new Map<string, { steps: readonly number[]; tfs: readonly number[] }>();
  for (const key of keys) lists.set(key, source.recentPostings(key, t.maxPostings));
  const { byStep, docs, docSteps } = numberDocs(source, lists.values());
  const postings = new Map<string, Postings>();
  for (const [key, list] of lists) {
    const p: Postings = { docs: [], tfs: [] };
    for (let i = 0; i < list.steps.length; i++) {
      const docNo = byStep.get(list.steps[i]!);
      if (docNo === undefined) continue;
      p.docs.push(docNo);
      p.tfs.push(list.tfs[i]!);
    }
    postings.set(key, p);
  }
  return {
    ...statistics,
    postings: (key) => postings.get(key),
    doc: (docNo) => {
      const d = docs[docNo];
      if (d === undefined) throw new RangeError(`no ranked document ${docNo}`);
      return d;
    },
    stepOf: (docNo) => {
      const s = docSteps[docNo];
      if (s === undefined) throw new RangeError(`no ranked document ${docNo}`);
      return s;
    },
    docOf: (step) => byStep.get(step),
    scratchSlots: () => new Int32Array(Math.max(16, docs.length)),
  };
}

/** What a view answers before the query is expanded (and after, unchanged), memoised per view. */
function viewStatistics(
  source: RankedSource,
): Pick<
  RankedIndexView,
  'size' | 'averageBlockLength' | 'lastStep' | 'docFrequency' | 'extensions' | 'topExtensions'
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
  const extensions = (prefix: string): string[] => {
    if (prefix.length < PREFIX_BUCKET) return [];
    let e = exts.get(prefix);
    if (!e) {
      e = source.keysWithPrefix(prefix);
      exts.set(prefix, e);
    }
    return e;
  };
  // Not memoised here: a prompt asks once per key, and the store caches the answer per process.
  const topExtensions = (prefix: string, maxLength: number, limit: number): string[] =>
    prefix.length < PREFIX_BUCKET ? [] : source.topExtensions!(prefix, maxLength, limit);
  return {
    size: source.size,
    averageBlockLength: source.blocks === 0 ? 1 : Math.max(1, source.blockLength / source.blocks),
    lastStep: source.lastStep,
    docFrequency,
    extensions,
    ...(source.topExtensions ? { topExtensions } : {}),
  };
}

/**
 * The documents of the turns that hold a read key, and of the turn after each (a result
 * inherits from its call), numbered densely in the order the lists name them: nothing a scan
 * computes depends on that order, and sorting the steps was a twentieth of a warm scan.
 */
function numberDocs(
  source: RankedSource,
  lists: Iterable<{ steps: readonly number[] }>,
): { byStep: StepTable; docs: RankedDoc[]; docSteps: number[] } {
  const byStep = stepTable(lists);
  const steps = byStep.steps();
  const stats = source.docs(steps);
  const docs: RankedDoc[] = [];
  // The steps beside the documents: a scan reads thousands, and each document is a cache miss.
  const docSteps: number[] = [];
  for (let i = 0; i < steps.length; i++) {
    const doc = stats[i];
    if (doc === undefined) continue;
    byStep.set(steps[i]!, docs.length);
    docs.push(doc);
    docSteps.push(steps[i]!);
  }
  return { byStep, docs, docSteps };
}

/** Document numbers by step for one view: the steps it reads, and their numbers once known. */
interface StepTable {
  /** The steps read (every posting's step and the step after it), each once, as first listed. */
  steps(): number[];
  set(step: number, docNo: number): void;
  get(step: number): number | undefined;
}

/** Widest step range a view numbers in a flat array (4 MB); wider ranges use a map. */
const MAX_DENSE_SPAN = 1 << 20;

/**
 * A {@link StepTable} over the steps of `lists`: a flat array offset by the smallest step, so
 * the thousands of lookups of a scan are array reads (a large store's postings spread over its
 * whole range, which a map made the dominant cost). The steps themselves are listed as the
 * postings name them, never by walking the range. Only a range wider than {@link MAX_DENSE_SPAN}
 * (step ids far apart) falls back to a map.
 */
function stepTable(lists: Iterable<{ steps: readonly number[] }>): StepTable {
  let lo = Number.POSITIVE_INFINITY;
  let hi = Number.NEGATIVE_INFINITY;
  let count = 0;
  const all: (readonly number[])[] = [];
  for (const l of lists) {
    if (l.steps.length === 0) continue;
    all.push(l.steps);
    count += l.steps.length;
    for (const st of l.steps) {
      if (st < lo) lo = st;
      if (st + 1 > hi) hi = st + 1;
    }
  }
  if (count === 0) return { steps: () => [], set() {}, get: () => undefined };
  const span = hi - lo + 1;
  if (span > MAX_DENSE_SPAN) return mapTable(all);
  // 0: not read; -1: read, no document; n > 0: document n - 1.
  const slots = new Int32Array(span);
  const wanted = new Float64Array(2 * count);
  let n = 0;
  for (const list of all) {
    for (const s of list) {
      if (slots[s - lo] === 0) {
        slots[s - lo] = -1;
        wanted[n++] = s;
      }
      if (slots[s + 1 - lo] === 0) {
        slots[s + 1 - lo] = -1;
        wanted[n++] = s + 1;
      }
    }
  }
  return {
    steps() {
      const out = new Array<number>(n);
      for (let i = 0; i < n; i++) out[i] = wanted[i]!;
      return out;
    },
    set(step, docNo) {
      slots[step - lo] = docNo + 1;
    },
    get(step) {
      if (step < lo || step > hi) return undefined;
      const v = slots[step - lo]!;
      return v > 0 ? v - 1 : undefined;
    },
  };
}

function mapTable(all: readonly (readonly number[])[]): StepTable {
  const wanted = new Set<number>();
  for (const list of all) {
    for (const s of list) {
      wanted.add(s);
      wanted.add(s + 1);
    }
  }
  const byStep = new Map<number, number>();
  return {
    steps: () => [...wanted],
    set: (step, docNo) => void byStep.set(step, docNo),
    get: (step) => byStep.get(step),
  };
}
