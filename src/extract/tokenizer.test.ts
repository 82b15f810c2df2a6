import { describe, expect, it } from 'vitest';
import { isUsageError } from '../protocol/errors.js';
import {
  o200kTokenizer,
  referenceTokenizer,
  resolveTokenizer,
  type Tokenizer,
} from './tokenizer.js';

describe('referenceTokenizer', () => {
  it('is max(1, codepoints // 4)', () => {
    expect(referenceTokenizer.name).toBe('reference');
    expect(referenceTokenizer.count('')).toBe(1);
    expect(referenceTokenizer.count('abc')).toBe(1);
    expect(referenceTokenizer.count('abcdefgh')).toBe(2);
    expect(referenceTokenizer.count('abcdefghijk')).toBe(2);
    // Astral characters count once: 8 code points, 16 UTF-16 units.
    expect(referenceTokenizer.count('🚀'.repeat(8))).toBe(2);
  });
});

describe('o200kTokenizer', () => {
  const t = o200kTokenizer();

  it('counts o200k_base tokens', () => {
    expect(t.name).toBe('o200k');
    expect(t.count('hello world')).toBe(2);
    expect(t.count('')).toBe(0);
    expect(t.count('Hello, world!')).toBe(4);
    expect(t.count('The quick brown fox jumps over the lazy dog.')).toBe(10);
    // Digits split in groups of three: ' ', '543', '3'.
    expect(t.count('PostgreSQL running on port 5433')).toBe(9);
  });

  it('counts special-token text as plain text instead of throwing', () => {
    // '<', '|', 'end', 'of', 'text', '|', '>'
    expect(t.count('<|endoftext|>')).toBe(7);
  });

  it('is a shared instance', () => {
    expect(o200kTokenizer()).toBe(t);
  });
});

describe('resolveTokenizer', () => {
  it('resolves names, instances and the default', () => {
    expect(resolveTokenizer().name).toBe('o200k');
    expect(resolveTokenizer('o200k').name).toBe('o200k');
    expect(resolveTokenizer('reference')).toBe(referenceTokenizer);
    const custom: Tokenizer = { name: 'words', count: (s) => s.split(' ').length };
    expect(resolveTokenizer(custom)).toBe(custom);
  });

  it('rejects unknown names with a UsageError', () => {
    let err: unknown;
    try {
      resolveTokenizer('cl100k' as 'o200k');
    } catch (e) {
      err = e;
    }
    expect(isUsageError(err)).toBe(true);
    expect((err as Error).message).toMatch(/unknown tokenizer "cl100k"/);
  });
});
