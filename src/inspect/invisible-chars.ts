// Characters that render as nothing or reorder the text around them. Shared by the server (a
// payload's lines) and the browser client (summaries, terms, packs): both show them by code
// point, so archived text cannot hide or reorder what is on screen.

/** Zero-width and bidi controls, the tags block, C1 controls, … (global: for `matchAll`). */
const INVISIBLE =
  /[\u0080-\u009f\u00ad\u061c\u180e\u200b-\u200f\u2028-\u202e\u2060-\u2064\u2066-\u206f\ufeff\ufff9-\ufffb]|\udb40[\udc00-\udc7f]/g;

/** A run of text shown as is, or one invisible character shown by its code point. */
export type TextPiece = { kind: 'text'; text: string } | { kind: 'invisible'; code: string };

/**
 * Splits text into runs shown as they are and the invisible or reordering characters between
 * them, each by code point (`U+202E`). Lazy, so a caller can stop early. Pure.
 *
 * @example
 * [...textPieces('a\u202eb')]; // [text 'a', invisible 'U+202E', text 'b']
 */
export function* textPieces(text: string): Generator<TextPiece> {
  let pos = 0;
  for (const m of text.matchAll(INVISIBLE)) {
    if (m.index > pos) yield { kind: 'text', text: text.slice(pos, m.index) };
    const cp = m[0].codePointAt(0)!;
    yield { kind: 'invisible', code: `U+${cp.toString(16).toUpperCase().padStart(4, '0')}` };
    pos = m.index + m[0].length;
  }
  if (pos < text.length) yield { kind: 'text', text: text.slice(pos) };
}
