import { chunkText } from '../engine/chunk.js';
import type { Tokenizer } from '../extract/tokenizer.js';
import type { ScoredPage, TrajectoryTurn } from './types.js';

/**
 * The stop list of the baseline: Lucene's classic English analyzer set (the "plain BM25" most
 * search engines start from), so the baseline is a fair, standard retriever and not a strawman.
 */
export const BASELINE_STOPWORDS: ReadonlySet<string> = new Set(
  (
    'a an and are as at be but by for if in into is it no not of on or such that the their then ' +
    'there these they this to was will with'
  ).split(' '),
);

/** Settings of the baseline (fixed; never tuned on questions). */
export const BASELINE_SETTINGS = Object.freeze({ chunkTokens: 400, k1: 1.2, b: 0.75 });

const WORD = /[\p{L}\p{N}_]+/gu;

function words(text: string): string[] {
  return (text.toLowerCase().match(WORD) ?? []).filter((w) => !BASELINE_STOPWORDS.has(w));
}

interface Chunk {
  step: number;
  text: string;
  tokens: number;
  tf: Map<string, number>;
  length: number;
}

/**
 * The BM25 chunk baseline of issue 9: every folded turn cut into chunks of at most 400 tokens at
 * line boundaries, plain BM25 (k1 1.2, b 0.75, IDF over the chunks folded so far) over lowercase
 * words minus a standard stop list, and chunks paged in score order while they fit the per-turn
 * budget (a chunk that does not fit is skipped, a smaller later one may still fit). No summaries,
 * no time cues, no windows. Chunks are cut once per turn, so a session costs one pass.
 *
 * @example
 * const b = new Bm25ChunkBaseline(tokenizer);
 * b.add(turns);
 * b.pages('Which port?', 120, 3500); // [{ step_id, content }, …]
 */
export class Bm25ChunkBaseline {
  readonly #chunks: Chunk[] = [];
  readonly #tokenizer: Tokenizer;
  #folded = -1;

  constructor(tokenizer: Tokenizer) {
    this.#tokenizer = tokenizer;
  }

  /** Adds turns in step order (turns already added are ignored). */
  add(turns: readonly TrajectoryTurn[]): void {
    for (const t of turns) {
      if (t.step_id <= this.#folded) continue;
      this.#folded = t.step_id;
      for (const text of chunkText(t.content, BASELINE_SETTINGS.chunkTokens, this.#tokenizer)) {
        const ws = words(text);
        const tf = new Map<string, number>();
        for (const w of ws) tf.set(w, (tf.get(w) ?? 0) + 1);
        const tokens = this.#tokenizer.count(text);
        this.#chunks.push({ step: t.step_id, text, tokens, tf, length: ws.length });
      }
    }
  }

  /** The pages for a question asked after `askedAfter`, filling `budget` tokens in score order. */
  pages(question: string, askedAfter: number, budget: number): ScoredPage[] {
    const chunks = this.#chunks.filter((c) => c.step <= askedAfter);
    const n = chunks.length;
    if (n === 0) return [];
    const avg = Math.max(1, chunks.reduce((s, c) => s + c.length, 0) / n);
    const terms = [...new Set(words(question))];
    const df = new Map(terms.map((w) => [w, chunks.filter((c) => c.tf.has(w)).length]));
    const { k1, b } = BASELINE_SETTINGS;
    const scored: { c: Chunk; s: number; i: number }[] = [];
    chunks.forEach((c, i) => {
      let s = 0;
      for (const w of terms) {
        const tf = c.tf.get(w);
        if (!tf) continue;
        const d = df.get(w)!;
        const idf = Math.log(1 + (n - d + 0.5) / (d + 0.5));
        s += (idf * tf * (k1 + 1)) / (tf + k1 * (1 - b + (b * c.length) / avg));
      }
      if (s > 0) scored.push({ c, s, i });
    });
    scored.sort((x, y) => y.s - x.s || y.i - x.i);
    const out: ScoredPage[] = [];
    let used = 0;
    for (const { c } of scored) {
      if (used + c.tokens > budget) continue;
      out.push({ step_id: c.step, content: c.text });
      used += c.tokens;
    }
    return out;
  }
}
