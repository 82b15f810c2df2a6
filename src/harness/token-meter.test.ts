import { describe, expect, it } from 'vitest';
import { o200kTokenizer, type Tokenizer } from '../extract/tokenizer.js';
import { TokenMeter } from './token-meter.js';

/** o200k, with the texts it was asked to count. */
function counted(): { tokenizer: Tokenizer; calls: string[] } {
  const inner = o200kTokenizer();
  const calls: string[] = [];
  return {
    calls,
    tokenizer: {
      name: inner.name,
      count: (text) => {
        calls.push(text);
        return inner.count(text);
      },
    },
  };
}

describe('TokenMeter', () => {
  it('counts a long text once (a page paged in over many turns), and gives the tokenizer’s count', () => {
    const { tokenizer, calls } = counted();
    const meter = new TokenMeter(tokenizer);
    const page = `<archived_record step_id="7">\n${'port 5433 refused the connection\n'.repeat(40)}`;
    const other = `${page}.`;
    expect(page.length).toBeGreaterThan(512);
    const n = meter.text(page);
    expect(n).toBe(o200kTokenizer().count(page));
    expect(meter.text(`${page}`)).toBe(n);
    expect(meter.text(other)).toBe(o200kTokenizer().count(other));
    expect(calls).toEqual([page, other]);
    // Short texts are memoised too; a fresh meter counts again.
    meter.text('hi');
    meter.text('hi');
    new TokenMeter(tokenizer).text(page);
    expect(calls).toEqual([page, other, 'hi', page]);
  });
});
