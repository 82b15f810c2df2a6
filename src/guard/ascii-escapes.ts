/** A text with its `\u00XX` escapes decoded, and where each of its characters came from. */
export interface DecodedView {
  text: string;
  /** `origin[i]`: offset in the original text of character `i`; `origin[text.length]` is its length. */
  origin: Uint32Array;
}

/** A `\\` pair (an escaped backslash, kept) or a `\u` escape of an ASCII character. */
const ESCAPE = /\\(?:\\|u00([0-7][0-9A-Fa-f]))/g;

/**
 * The text with every `\u` escape of an ASCII character decoded (`\u0041KIA…` as JSON writes
 * with `ensure_ascii`, `\u003d` as Go writes `=`, a token escaped character by character), so
 * that a secret written that way is found; spans found in the view map back through `origin` to
 * the escaped bytes. An escaped backslash (`\\u0041`) is not an escape. Null when there is
 * nothing to decode (most texts). Linear in the text.
 *
 * @example
 * const v = decodeAsciiEscapes('\\u0041KIA'); // { text: 'AKIA', origin: [0, 6, 7, 8, 9] }
 */
export function decodeAsciiEscapes(text: string): DecodedView | null {
  if (!text.includes('\\u00')) return null;
  const parts: string[] = [];
  const origin: number[] = [];
  let from = 0;
  for (const m of text.matchAll(ESCAPE)) {
    if (m[1] === undefined) continue;
    for (let i = from; i < m.index; i++) origin.push(i);
    parts.push(text.slice(from, m.index), String.fromCharCode(Number.parseInt(m[1], 16)));
    origin.push(m.index);
    from = m.index + m[0].length;
  }
  if (parts.length === 0) return null;
  for (let i = from; i <= text.length; i++) origin.push(i);
  parts.push(text.slice(from));
  return { text: parts.join(''), origin: Uint32Array.from(origin) };
}
