/** Byte order of a UTF-16 text: little-endian (BOM FF FE, as PowerShell writes) or big-endian. */
export type Utf16Order = 'le' | 'be';

const strictUtf16 = new TextDecoder('utf-16le', { fatal: true, ignoreBOM: true });

/**
 * The text of bytes that are UTF-16 with a byte-order mark: an even length, FF FE or FE FF
 * first, and well-formed code units after it (no lone surrogate). The text is without its BOM.
 * Anything else is `null` (FF and FE never occur in UTF-8, so UTF-8 is never taken for it).
 *
 * @example
 * decodeUtf16(Uint8Array.of(0xff, 0xfe, 0x41, 0x00)); // { order: 'le', text: 'A' }
 */
export function decodeUtf16(bytes: Uint8Array): { order: Utf16Order; text: string } | null {
  if (bytes.length < 2 || bytes.length % 2 !== 0) return null;
  const order =
    bytes[0] === 0xff && bytes[1] === 0xfe
      ? 'le'
      : bytes[0] === 0xfe && bytes[1] === 0xff
        ? 'be'
        : null;
  if (!order) return null;
  const body = Buffer.from(bytes.subarray(2));
  if (order === 'be') body.swap16();
  try {
    return { order, text: strictUtf16.decode(body) };
  } catch {
    return null;
  }
}

/**
 * `text` as UTF-16 in `order`, with its byte-order mark (the inverse of {@link decodeUtf16}).
 *
 * @example
 * encodeUtf16('A', 'be'); // <Buffer fe ff 00 41>
 */
export function encodeUtf16(text: string, order: Utf16Order): Buffer {
  const body = Buffer.from(text, 'utf16le');
  if (order === 'be') body.swap16();
  return Buffer.concat([order === 'le' ? Buffer.of(0xff, 0xfe) : Buffer.of(0xfe, 0xff), body]);
}

/**
 * Offsets in the bytes {@link encodeUtf16} makes of `text` (BOM included) of ascending UTF-8
 * byte offsets of `text` that fall on code point boundaries, in one pass.
 *
 * @example
 * utf16Offsets('é a', [0, 2, 4]); // [2, 4, 8]
 */
export function utf16Offsets(text: string, utf8Offsets: readonly number[]): number[] {
  const out: number[] = [];
  let i = 0;
  let bytes = 0;
  for (const target of utf8Offsets) {
    while (bytes < target && i < text.length) {
      const c = text.codePointAt(i)!;
      bytes += c < 0x80 ? 1 : c < 0x800 ? 2 : c < 0x10000 ? 3 : 4;
      i += c >= 0x10000 ? 2 : 1;
    }
    out.push(2 + 2 * i);
  }
  return out;
}
