/**
 * Fast code-point classification for the scanners in terms.ts, equal by construction to the
 * regex classes in python-text.ts: each BMP unit is classified once with those regexes and
 * cached; astral code points (rare) are classified with the regexes directly.
 */
import { PY_WORD } from './python-text.js';

/** Not a Python `\w` character. */
export const OTHER = 1;
/** A Python `\w` character that is not a decimal digit (Python `[^\W\d]`). */
export const WORD = 2;
/** A decimal digit (Nd) other than ASCII 0–9. */
export const DIGIT = 3;
/** ASCII 0–9. */
export const ASCII_DIGIT = 4;

export type CharClass = typeof OTHER | typeof WORD | typeof DIGIT | typeof ASCII_DIGIT;

const WORD_RE = new RegExp(`^[${PY_WORD}]$`, 'u');
const DECIMAL_RE = /^\p{Nd}$/u;

function classify(ch: string): CharClass {
  if (!WORD_RE.test(ch)) return OTHER;
  if (!DECIMAL_RE.test(ch)) return WORD;
  return ch.length === 1 && ch >= '0' && ch <= '9' ? ASCII_DIGIT : DIGIT;
}

// 0 = not yet classified. 64 KiB, filled lazily.
const bmp = new Uint8Array(0x10000);
for (let c = 0; c < 0x80; c++) bmp[c] = classify(String.fromCharCode(c));

/** Classes of U+0000–U+007F, for scanners' inline ASCII fast path. */
export const ASCII_CLASS: Readonly<Uint8Array> = bmp.subarray(0, 0x80);

/**
 * Class of the code point starting at UTF-16 index `i` of `s` (a surrogate pair is read whole;
 * a lone surrogate is {@link OTHER}).
 *
 * @example
 * classAt('a1', 0) === WORD; classAt('a1', 1) === ASCII_DIGIT;
 */
export function classAt(s: string, i: number): CharClass {
  const c = s.charCodeAt(i);
  if (c >= 0xd800 && c <= 0xdbff) {
    const d = s.charCodeAt(i + 1);
    if (d >= 0xdc00 && d <= 0xdfff) return classify(s.slice(i, i + 2));
    return OTHER;
  }
  let k = bmp[c] as number;
  if (k === 0) {
    k = classify(String.fromCharCode(c));
    bmp[c] = k;
  }
  return k as CharClass;
}
