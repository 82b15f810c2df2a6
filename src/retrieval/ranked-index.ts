import { compareCodePoints } from '../protocol/canonical-json.js';
import { hasErrorSignal, heldShapes } from './ranked-intent.js';
import { proseRatio, rankedTerms } from './ranked-terms.js';

/** One folded turn as the ranked index sees it. */
export interface RankedDocInput {
  stepId: number;
  /** The turn's summary (indexed like content). */
  summary: string;
  /** The payload text (for non-UTF-8 payloads, its lossy decoding). */
  content: string;
  /** Tokens of the whole payload, in the engine's tokenizer. */
  tokens: number;
}

/**
 * Everything the ranked index derives from one turn's text, before it is inserted: a pure
 * function of `{summary, content, tokens}`, so it can be cached by content (see
 * `src/engine/ranked-cache.ts`) and inserted later without the text.
 */
export interface RankedAnalysis {
  /** Distinct retrieval keys, sorted by code point (parallel to `counts`). */
  keys: readonly string[];
  /** Term frequency of each key (≥ 1). */
  counts: readonly number[];
  /** Number of keys with repeats (the sum of the counts; document length for BM25). */
  length: number;
  /** Tokens of the whole payload, in the engine's tokenizer. */
  tokens: number;
  /** The turn reports a failure (see `hasErrorSignal`). */
  error: boolean;
  /** Share of function words (see `proseRatio`). */
  prose: number;
  /** Answer shapes the payload holds (see `heldShapes`). */
  shapes: readonly string[];
}

/**
 * Analyses one turn for the ranked index (pure; no index state). Keys are ordered by code point,
 * never by first occurrence, so an analysis read back from a cache inserts exactly as a fresh one.
 * (Parallel `keys`/`counts` arrays rather than `[key, count]` pairs: a cold open decodes one
 * analysis per turn, and the flat form parses about three times faster.)
 *
 * @example
 * const a = analyseRankedDoc({ summary: '', content: 'port 5433 port', tokens: 4 });
 * a.keys; // ['5433', 'port']
 * a.counts; // [1, 2]
 */
export function analyseRankedDoc(input: Omit<RankedDocInput, 'stepId'>): RankedAnalysis {
  const all = rankedTerms(`${input.summary}\n${input.content}`);
  const tf = new Map<string, number>();
  for (const k of all) tf.set(k, (tf.get(k) ?? 0) + 1);
  const keys = [...tf.keys()].sort(compareCodePoints);
  return {
    keys,
    counts: keys.map((k) => tf.get(k)!),
    length: all.length,
    tokens: input.tokens,
    error: hasErrorSignal(input.content),
    prose: proseRatio(input.content),
    shapes: heldShapes(input.content),
  };
}

/** Per-document statistics kept for scoring. */
export interface RankedDoc {
  stepId: number;
  /** Number of keys (document length for BM25). */
  length: number;
  tokens: number;
  /** The turn reports a failure (see `hasErrorSignal`). */
  error: boolean;
  /** Share of function words (see `proseRatio`). */
  prose: number;
  /** Answer shapes the payload holds (see `heldShapes`). */
  shapes: readonly string[];
}

/** Postings of one key: parallel arrays of document numbers and term frequencies. */
export interface Postings {
  docs: number[];
  tfs: number[];
}

/** Keys are bucketed by their first few characters for prefix expansion without a vocab scan. */
export const PREFIX_BUCKET = 4;

/**
 * The in-memory index of the ranked page-in: postings per retrieval key, document lengths and
 * a prefix table. Adding a turn costs O(its keys); a scan touches only the postings of the
 * prompt's keys (and their prefix expansions), never every node.
 *
 * @example
 * const index = new RankedIndex();
 * index.add({ stepId: 37, summary: 'tool: psql', content: 'port 5433', tokens: 3 });
 * index.docFrequency('5433'); // 1
 */
export class RankedIndex {
  readonly #docs: RankedDoc[] = [];
  readonly #lengths: number[] = [];
  readonly #byStep = new Map<number, number>();
  readonly #postings = new Map<string, Postings>();
  readonly #buckets = new Map<string, string[]>();
  #totalLength = 0;
  #scratch = new Int32Array(0);

  /** Number of indexed turns. */
  get size(): number {
    return this.#docs.length;
  }

  /** Mean document length in keys (1 when empty, to keep BM25 finite). */
  get averageLength(): number {
    return this.#docs.length === 0 ? 1 : Math.max(1, this.#totalLength / this.#docs.length);
  }

  has(stepId: number): boolean {
    return this.#byStep.has(stepId);
  }

  /** Adds a turn. Adding a step that is already indexed is a no-op (folds are immutable). */
  add(input: RankedDocInput): void {
    if (this.#byStep.has(input.stepId)) return;
    this.addAnalysis(input.stepId, analyseRankedDoc(input));
  }

  /**
   * Inserts an analysed turn (see {@link analyseRankedDoc}); a no-op for a step already indexed.
   *
   * @example
   * index.addAnalysis(37, analyseRankedDoc({ summary: 'tool: psql', content: 'port 5433', tokens: 3 }));
   */
  addAnalysis(stepId: number, analysis: RankedAnalysis): void {
    if (this.#byStep.has(stepId)) return;
    const docNo = this.#docs.length;
    const { keys, counts } = analysis;
    for (let i = 0; i < keys.length; i++) {
      const key = keys[i]!;
      let p = this.#postings.get(key);
      if (!p) {
        p = { docs: [], tfs: [] };
        this.#postings.set(key, p);
        if (key.length >= PREFIX_BUCKET) {
          const b = key.slice(0, PREFIX_BUCKET);
          const bucket = this.#buckets.get(b);
          if (bucket) bucket.push(key);
          else this.#buckets.set(b, [key]);
        }
      }
      p.docs.push(docNo);
      p.tfs.push(counts[i]!);
    }
    this.#docs.push({
      stepId,
      length: analysis.length,
      tokens: analysis.tokens,
      error: analysis.error,
      prose: analysis.prose,
      shapes: analysis.shapes,
    });
    this.#lengths.push(analysis.length);
    this.#byStep.set(stepId, docNo);
    this.#totalLength += analysis.length;
  }

  /** Statistics of document number `docNo`. */
  doc(docNo: number): RankedDoc {
    const d = this.#docs[docNo];
    if (!d) throw new RangeError(`no ranked document ${docNo}`);
    return d;
  }

  /** Document lengths by document number (read-only view for scoring loops). */
  lengths(): readonly number[] {
    return this.#lengths;
  }

  /** Document number of a step, if indexed. */
  docOf(stepId: number): number | undefined {
    return this.#byStep.get(stepId);
  }

  postings(key: string): Postings | undefined {
    return this.#postings.get(key);
  }

  docFrequency(key: string): number {
    return this.#postings.get(key)?.docs.length ?? 0;
  }

  /**
   * A zeroed array with one slot per turn, for per-scan bookkeeping without a Map. Callers must
   * zero the slots they set before returning (keeps a scan proportional to the postings read).
   */
  scratchSlots(): Int32Array {
    if (this.#scratch.length < this.#docs.length) {
      this.#scratch = new Int32Array(Math.max(1024, this.#docs.length * 2));
    }
    return this.#scratch;
  }

  /** Indexed keys that start with `prefix` and are longer than it (unordered). */
  extensions(prefix: string): string[] {
    if (prefix.length < PREFIX_BUCKET) return [];
    const bucket = this.#buckets.get(prefix.slice(0, PREFIX_BUCKET)) ?? [];
    return bucket.filter((k) => k.length > prefix.length && k.startsWith(prefix));
  }
}
