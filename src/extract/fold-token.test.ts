import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { foldToken, isStopword, STOPWORDS } from './fold-token.js';

describe('foldToken', () => {
  it.each([
    ['İNCİ', 'inci'], // 'İ'.lower() is 'i' + U+0307; the dot is deleted
    ['IŞIK', 'işik'],
    ['ılık', 'ilik'], // dotless ı maps to i
    ['Veritabanı', 'veritabani'],
    ['ΟΔΟΣ', 'οδος'], // final sigma, as Python's lower()
    ['Straße', 'straße'],
    ['ÉCOLE', 'école'],
    ['E\u0301COLE', '\u00e9cole'], // NFC after lowering
    ['i\u0307x', 'ix'],
    ['𝔘𝔫𝔦', '𝔘𝔫𝔦'],
    ['ﬁle', 'ﬁle'], // NFC keeps compatibility ligatures
  ])('%s → %s', (raw, folded) => {
    expect(foldToken(raw)).toBe(folded);
  });

  it('folds ASCII as the full definition does (its fast path; property)', () => {
    const full = (x: string) =>
      x
        .toLowerCase()
        .normalize('NFC')
        .replace(/[\u0307\u0131]/g, (c) => (c === '\u0131' ? 'i' : ''));
    fc.assert(
      fc.property(fc.string({ unit: 'binary-ascii', maxLength: 40 }), (x) => {
        expect(foldToken(x)).toBe(full(x));
      }),
    );
    expect(foldToken('ReadMe.MD')).toBe('readme.md');
  });

  it('is idempotent', () => {
    fc.assert(
      fc.property(fc.string({ unit: 'grapheme-composite', maxLength: 40 }), (s) => {
        const once = foldToken(s);
        expect(foldToken(once)).toBe(once);
      }),
    );
  });
});

describe('stopwords', () => {
  it('holds the reference list', () => {
    expect(STOPWORDS.size).toBe(72);
    for (const w of ['the', 'and', 've', 'için', 'çünkü', 'nasıl', 'şey', 'mı', 'mü']) {
      expect(STOPWORDS.has(w)).toBe(true);
    }
  });

  it('matches in raw or folded form', () => {
    expect(isStopword('The')).toBe(true);
    expect(isStopword('nasıl')).toBe(true);
    expect(isStopword('NASIL')).toBe(false);
    expect(isStopword('theme')).toBe(false);
  });
});
