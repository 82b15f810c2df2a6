import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { BLOCK_CHARS, blockSpans, readSpans } from './block-spans.js';

const lines = (n: number, width = 99) =>
  Array.from({ length: n }, (_, i) => `${`line ${i} `.padEnd(width, 'x')}\n`).join('');

describe('readSpans', () => {
  it('reads every block of a payload within the budget', () => {
    const text = lines(100);
    const { spans } = blockSpans(text);
    expect(readSpans(text, spans, text.length)).toEqual({ spans, analysed: text.length });
  });

  it('reads the head and the tail of a longer payload, within the budget, as whole blocks', () => {
    const text = lines(1000);
    const { spans } = blockSpans(text);
    const read = readSpans(text, spans, 20_000);
    expect(read.analysed).toBeLessThanOrEqual(20_000);
    expect(read.analysed).toBeGreaterThan(20_000 - 2 * BLOCK_CHARS);
    expect(read.analysed).toBe(read.spans.reduce((s, b) => s + b.to - b.from, 0));
    // A subset of the whole payload's blocks, in order: its first and its last among them.
    for (const s of read.spans) expect(spans).toContainEqual(s);
    expect(read.spans[0]).toEqual(spans[0]);
    expect(read.spans.at(-1)).toEqual(spans.at(-1));
    const gaps = read.spans.filter((s, i) => i > 0 && s.start !== read.spans[i - 1]!.end);
    expect(gaps).toHaveLength(1);
  });

  it('cuts one line longer than the budget after a space, never inside a word', () => {
    const text = `${'word '.repeat(10_000)}\nlast line\n`;
    const { spans } = blockSpans(text);
    const read = readSpans(text, spans, 1001);
    const first = read.spans[0]!;
    expect(first.start).toBe(0);
    expect(first.to).toBeLessThanOrEqual(500);
    expect(text[first.to - 1]).toBe(' ');
    expect(read.spans.at(-1)).toEqual(spans.at(-1));
    expect(read.analysed).toBeLessThanOrEqual(1001);
  });

  it('cuts a line without spaces where the budget ends', () => {
    const text = 'x'.repeat(5000);
    const read = readSpans(text, blockSpans(text).spans, 3000);
    expect(read.spans).toEqual([{ start: 0, end: 1, from: 0, to: 1500 }]);
    expect(read.analysed).toBe(1500);
  });

  it('stays within any budget, with blocks in order that never overlap (property)', () => {
    const text = fc.stringMatching(/^[a-z \n]{0,3000}$/);
    fc.assert(
      fc.property(text, fc.integer({ min: 1, max: 4000 }), (t, budget) => {
        const read = readSpans(t, blockSpans(t).spans, budget);
        expect(read.analysed).toBeLessThanOrEqual(budget);
        expect(read.spans[0]!.from).toBe(0);
        expect(read.spans.length).toBeGreaterThan(0);
        read.spans.forEach((s, i) => {
          if (i > 0) expect(s.from).toBeGreaterThanOrEqual(read.spans[i - 1]!.to);
          if (i > 0) expect(s.start).toBeGreaterThanOrEqual(read.spans[i - 1]!.end);
        });
      }),
    );
  });
});
