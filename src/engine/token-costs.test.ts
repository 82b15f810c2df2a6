import { describe, expect, it } from 'vitest';
import { o200kTokenizer, referenceTokenizer } from '../extract/tokenizer.js';
import type { IndexEntry } from '../protocol/types.js';
import type { EngineStore } from './open-store.js';
import { TokenCosts } from './token-costs.js';

const entry = { payload_sha256: 'ab'.repeat(32), token_estimate: 3 } as IndexEntry;
/** A store that knows 7 tokens for every payload. */
const store = { tokens: () => 7 } as unknown as EngineStore;

describe('TokenCosts.counter', () => {
  it('answers the stored count for the payload and keeps o200k summable across line starts', () => {
    const counter = new TokenCosts(o200kTokenizer(), store).counter(entry, 'the payload\n');
    expect(counter.count('the payload\n')).toBe(7);
    expect(counter.count('hello world')).toBe(2);
    expect(counter.additiveAtLineStarts).toBe(true);
  });

  it('never marks a tokenizer summable that is not', () => {
    const counter = new TokenCosts(referenceTokenizer, store).counter(entry, 'x');
    expect(counter.count('x')).toBe(3);
    expect(counter.additiveAtLineStarts).toBeUndefined();
  });
});
