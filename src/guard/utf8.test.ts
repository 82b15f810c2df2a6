import { isUtf8 } from 'node:buffer';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { byteOffsets, utf8Runs } from './utf8.js';

describe('byteOffsets', () => {
  it('equals the UTF-8 length of every prefix, for any text', () => {
    fc.assert(
      fc.property(fc.string({ unit: 'grapheme' }), (text) => {
        const idx = [...Array(text.length + 1).keys()].filter(
          (i) =>
            i === text.length || !(text.charCodeAt(i) >= 0xdc00 && text.charCodeAt(i) <= 0xdfff),
        );
        expect(byteOffsets(text, idx)).toEqual(
          idx.map((i) => Buffer.byteLength(text.slice(0, i), 'utf8')),
        );
      }),
    );
  });

  it('counts a lone surrogate as the 3 bytes of its replacement', () => {
    expect(byteOffsets('a\uD800b', [3])).toEqual([5]);
  });
});

describe('utf8Runs', () => {
  it('covers every byte in order; valid runs are UTF-8 and invalid ones are not', () => {
    fc.assert(
      fc.property(fc.uint8Array({ maxLength: 64 }), (bytes) => {
        const runs = utf8Runs(bytes);
        let at = 0;
        for (const r of runs) {
          expect(r.start).toBe(at);
          expect(r.end).toBeGreaterThan(r.start);
          at = r.end;
          const part = bytes.subarray(r.start, r.end);
          if (r.valid) expect(isUtf8(part)).toBe(true);
          else for (const b of part) expect(isUtf8(Uint8Array.of(b))).toBe(false);
        }
        expect(at).toBe(bytes.length);
        if (isUtf8(bytes) && bytes.length > 0)
          expect(runs).toEqual([{ start: 0, end: bytes.length, valid: true }]);
      }),
    );
  });

  it('rejects overlongs, surrogates and code points above U+10FFFF', () => {
    for (const bad of [
      [0xc0, 0x80],
      [0xe0, 0x80, 0x80],
      [0xed, 0xa0, 0x80],
      [0xf4, 0x90, 0x80, 0x80],
    ]) {
      expect(utf8Runs(Uint8Array.from(bad)).every((r) => !r.valid)).toBe(true);
    }
    expect(utf8Runs(Buffer.from('é€😀'))).toEqual([{ start: 0, end: 9, valid: true }]);
  });
});
