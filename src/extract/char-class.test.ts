import { describe, expect, it } from 'vitest';
import { ASCII_DIGIT, classAt, DIGIT, OTHER, WORD } from './char-class.js';

describe('classAt', () => {
  it('agrees with Python \\w / \\d (as Unicode properties) on every code point', () => {
    const mismatches: string[] = [];
    for (let c = 0; c <= 0x10ffff; c++) {
      if (c >= 0xd800 && c <= 0xdfff) continue;
      const ch = String.fromCodePoint(c);
      const expected = !/[\p{L}\p{N}_]/u.test(ch)
        ? OTHER
        : !/\p{Nd}/u.test(ch)
          ? WORD
          : c <= 0x39 && c >= 0x30
            ? ASCII_DIGIT
            : DIGIT;
      if (classAt(`${ch}x`, 0) !== expected) mismatches.push(c.toString(16));
    }
    expect(mismatches).toEqual([]);
  });

  it('reads a surrogate pair whole and a lone surrogate as OTHER', () => {
    expect(classAt('\u{1D518}', 0)).toBe(WORD);
    expect(classAt('\u{1D7D9}', 0)).toBe(DIGIT);
    expect(classAt('\uD835', 0)).toBe(OTHER);
    expect(classAt('\uDD18', 0)).toBe(OTHER);
    expect(classAt('x\uD835', 1)).toBe(OTHER);
  });
});
