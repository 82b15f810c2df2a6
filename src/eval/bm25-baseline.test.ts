import { describe, expect, it } from 'vitest';
import { resolveTokenizer } from '../extract/tokenizer.js';
import { BASELINE_STOPWORDS, Bm25ChunkBaseline } from './bm25-baseline.js';

const tok = resolveTokenizer('o200k');
const turn = (step_id: number, content: string) => ({ step_id, role: 'tool' as const, content });

describe('Bm25ChunkBaseline', () => {
  it('ranks chunks by BM25 over the turns folded so far, and fills the budget', () => {
    const b = new Bm25ChunkBaseline(tok);
    b.add([
      turn(0, 'postgres listens on port 5433'),
      turn(1, 'the billing table migration'),
      turn(2, 'port 80 for nginx'),
    ]);
    const pages = b.pages('which port does postgres listen on', 2, 3500);
    expect(pages.map((p) => p.step_id)).toEqual([0, 2]);
    expect(pages[0]!.content).toBe('postgres listens on port 5433');
    // Asked earlier: only the turns folded by then count (IDF too).
    expect(b.pages('nginx port', 1, 3500).map((p) => p.step_id)).toEqual([0]);
    // Stop words alone match nothing.
    expect(b.pages('the on for', 2, 3500)).toEqual([]);
    expect(BASELINE_STOPWORDS.has('the')).toBe(true);
  });

  it('cuts long turns into chunks of at most 400 tokens and skips chunks that do not fit', () => {
    const b = new Bm25ChunkBaseline(tok);
    const long = Array.from({ length: 600 }, (_, i) => `line ${i} widget`).join('\n');
    b.add([turn(0, long), turn(1, 'widget short')]);
    const pages = b.pages('widget', 1, 900);
    const tokens = pages.map((p) => tok.count(p.content));
    for (const n of tokens) expect(n).toBeLessThanOrEqual(400);
    expect(tokens.reduce((s, n) => s + n, 0)).toBeLessThanOrEqual(900);
    expect(pages.map((p) => p.step_id)).toContain(1); // a small chunk still fits at the end
  });
});
