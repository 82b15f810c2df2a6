import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { byteOffsets } from './utf8.js';
import { decodeUtf16, encodeUtf16, utf16Offsets } from './utf16.js';

describe('decodeUtf16 / encodeUtf16', () => {
  it('decode a text with either byte-order mark and encode it back to the same bytes', () => {
    fc.assert(
      fc.property(fc.string({ unit: 'grapheme' }), fc.constantFrom('le', 'be'), (t, order) => {
        const bytes = encodeUtf16(t, order as 'le' | 'be');
        expect(decodeUtf16(bytes)).toEqual({ order, text: t });
      }),
    );
  });

  it('take nothing without a BOM, of odd length or with a lone surrogate', () => {
    expect(decodeUtf16(Buffer.from('A\0B\0', 'latin1'))).toBeNull();
    expect(decodeUtf16(Uint8Array.of(0xff, 0xfe, 0x41))).toBeNull();
    expect(decodeUtf16(Uint8Array.of(0xff, 0xfe, 0x00, 0xd8))).toBeNull();
    expect(decodeUtf16(Uint8Array.of(0xef, 0xbb, 0xbf, 0x41))).toBeNull();
    expect(decodeUtf16(Uint8Array.of(0xfe, 0xff, 0x00, 0x41))).toEqual({ order: 'be', text: 'A' });
  });
});

describe('utf16Offsets', () => {
  it('maps UTF-8 offsets of code point boundaries to offsets in the encoded bytes', () => {
    const t = 'é a😀b';
    const cut = [0, 1, 2, 3, 5];
    const utf8 = byteOffsets(t, cut);
    expect(utf16Offsets(t, utf8)).toEqual(cut.map((i) => 2 + 2 * i));
  });
});
