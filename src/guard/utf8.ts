/**
 * UTF-8 byte offsets of ascending UTF-16 indices of `text`, in one pass over the text.
 *
 * @example
 * byteOffsets('é a', [0, 1, 3]); // [0, 2, 4]
 */
export function byteOffsets(text: string, indices: readonly number[]): number[] {
  const out: number[] = [];
  let i = 0;
  let bytes = 0;
  for (const target of indices) {
    while (i < target) {
      const c = text.charCodeAt(i);
      if (c < 0x80) bytes += 1;
      else if (c < 0x800) bytes += 2;
      else if (c >= 0xd800 && c <= 0xdbff && i + 1 < text.length) {
        const d = text.charCodeAt(i + 1);
        if (d >= 0xdc00 && d <= 0xdfff) {
          bytes += 4;
          i += 2;
          continue;
        }
        bytes += 3;
      } else bytes += 3;
      i++;
    }
    out.push(bytes);
  }
  return out;
}

/** A run of bytes that is (or is not) well-formed UTF-8. */
export interface Utf8Run {
  start: number;
  end: number;
  valid: boolean;
}

/** Length of the well-formed UTF-8 sequence at `i`, or 0 if none starts there. */
function sequenceAt(b: Uint8Array, i: number): number {
  const x = b[i]!;
  if (x < 0x80) return 1;
  let n: number;
  let lo = 0x80;
  let hi = 0xbf;
  if (x >= 0xc2 && x <= 0xdf) n = 2;
  else if (x >= 0xe0 && x <= 0xef) {
    n = 3;
    if (x === 0xe0) lo = 0xa0; // no overlongs
    if (x === 0xed) hi = 0x9f; // no surrogates
  } else if (x >= 0xf0 && x <= 0xf4) {
    n = 4;
    if (x === 0xf0) lo = 0x90;
    if (x === 0xf4) hi = 0x8f; // nothing above U+10FFFF
  } else return 0;
  if (i + n > b.length) return 0;
  const second = b[i + 1]!;
  if (second < lo || second > hi) return 0;
  for (let k = 2; k < n; k++) {
    const c = b[i + k]!;
    if (c < 0x80 || c > 0xbf) return 0;
  }
  return n;
}

/**
 * Splits bytes into maximal runs of well-formed UTF-8 and runs of bytes that are not, in order
 * and covering every byte. Redaction works inside the valid runs only, so the invalid bytes of
 * a binary payload pass through exactly.
 *
 * @example
 * utf8Runs(Uint8Array.of(0x61, 0xff, 0x62)); // [{0,1,true}, {1,2,false}, {2,3,true}]
 */
export function utf8Runs(bytes: Uint8Array): Utf8Run[] {
  const runs: Utf8Run[] = [];
  let i = 0;
  while (i < bytes.length) {
    const start = i;
    const n = sequenceAt(bytes, i);
    const valid = n > 0;
    i += valid ? n : 1;
    while (i < bytes.length) {
      const m = sequenceAt(bytes, i);
      if (m > 0 !== valid) break;
      i += valid ? m : 1;
    }
    runs.push({ start, end: i, valid });
  }
  return runs;
}
