import type { ExtractedTerms } from '../protocol/types.js';
import { ASCII_CLASS, ASCII_DIGIT, type CharClass, classAt, OTHER, WORD } from './char-class.js';
import { foldToken, isStopword } from './fold-token.js';
import { COMMAND_RE, ERROR_RE, FILE_RE } from './patterns.js';
import { pythonStrip } from './python-text.js';
import { sortedUniqueByCodePoint } from './sort.js';

export { foldToken } from './fold-token.js';

const BACKSLASH = /\\/g;

/**
 * Identifiers of already-NFC text: folded, stopwords dropped, sorted unique by code point.
 *
 * Equivalent to `findall(r'\b[^\W\d]\w{2,}\b|\b[0-9]{3,}\b')`: `\b` confines every match to
 * a whole maximal run of `\w`, so a run matches iff it starts with a non-digit and has at least
 * three code points, or consists of at least three ASCII digits. Scanning runs directly avoids
 * the regex engine's per-position lookbehinds (several times faster on 2 KB turns).
 */
function identifiersOfNfc(text: string): string[] {
  const seen = new Set<string>();
  const out = new Set<string>();
  const n = text.length;
  let i = 0;
  while (i < n) {
    let c = text.charCodeAt(i);
    const first = c < 0x80 ? (ASCII_CLASS[c] as CharClass) : classAt(text, i);
    if (first === OTHER) {
      i++;
      continue;
    }
    const start = i;
    let cps = 0;
    let asciiDigits = true;
    let ascii = true;
    let k: CharClass = first;
    for (;;) {
      if (k !== ASCII_DIGIT) asciiDigits = false;
      if (c >= 0x80) {
        ascii = false;
        if (c >= 0xd800 && c <= 0xdbff && i + 1 < n) i++;
      }
      i++;
      cps++;
      if (i >= n) break;
      c = text.charCodeAt(i);
      k = c < 0x80 ? (ASCII_CLASS[c] as CharClass) : classAt(text, i);
      if (k === OTHER) break;
    }
    if (cps < 3 || (first !== WORD && !asciiDigits)) continue;
    const raw = text.slice(start, i);
    if (seen.has(raw)) continue;
    seen.add(raw);
    // ASCII needs neither NFC nor the Turkish fixes: lower-casing is the whole fold.
    const folded = ascii ? raw.toLowerCase() : foldToken(raw);
    if (!isStopword(raw, folded)) out.add(folded);
  }
  return sortedUniqueByCodePoint(out);
}

/** Characters a file match can contain: Python `[\w.\-/\\]`. */
function isFileChar(text: string, i: number): boolean {
  const c = text.charCodeAt(i);
  return c === 0x2e || c === 0x2d || c === 0x2f || c === 0x5c || classAt(text, i) !== OTHER;
}

/** File paths of already-NFC text, backslashes turned into `/`, sorted unique. */
function filesOfNfc(text: string): string[] {
  // Every match lies inside one maximal run of `[\w.\-/\\]` and contains a '.', and the
  // pattern has no anchors or lookarounds, so matching each dotted run alone finds exactly the
  // matches of a scan over the whole text. Dotless runs (most words, base64 blobs) are never
  // handed to the regex, whose `[\w.-]+` backtracks quadratically over a long run.
  const out = new Set<string>();
  let from = 0;
  for (;;) {
    const dot = text.indexOf('.', from);
    if (dot < 0) break;
    let start = dot;
    while (start > 0) {
      const c = text.charCodeAt(start - 1);
      // Step over a surrogate pair as one code point.
      const d = text.charCodeAt(start - 2);
      const back = c >= 0xdc00 && c <= 0xdfff && d >= 0xd800 && d <= 0xdbff ? 2 : 1;
      if (!isFileChar(text, start - back)) break;
      start -= back;
    }
    let end = dot + 1;
    while (end < text.length && isFileChar(text, end)) {
      const c = text.charCodeAt(end);
      end += c >= 0xd800 && c <= 0xdbff ? 2 : 1;
    }
    for (const m of text.slice(start, end).matchAll(FILE_RE)) {
      out.add(m[0].replace(BACKSLASH, '/'));
    }
    from = end;
  }
  return sortedUniqueByCodePoint(out);
}

/** Shell commands (`$ cmd` / `> cmd` lines) of already-NFC text, stripped, sorted unique. */
function commandsOfNfc(text: string): string[] {
  if (!text.includes('$') && !text.includes('>')) return [];
  const out = new Set<string>();
  for (const m of text.matchAll(COMMAND_RE)) {
    const cmd = pythonStrip(m[1] ?? '');
    if (cmd !== '') out.add(cmd);
  }
  return sortedUniqueByCodePoint(out);
}

/** Error markers of already-NFC text, sorted unique. */
function errorsOfNfc(text: string): string[] {
  const out = new Set<string>();
  for (const m of text.matchAll(ERROR_RE)) out.add(m[0]);
  return sortedUniqueByCodePoint(out);
}

/** Explicit term lists that replace the extracted ones. */
export interface ExplicitTerms {
  files?: string[];
  commands?: string[];
  errors?: string[];
}

/**
 * Extraction over text that is already NFC. {@link extractTerms} without re-normalising, for
 * callers (the projection) that hold the NFC forms anyway.
 */
export function extractTermsNfc(
  summaryNfc: string,
  payloadNfc: string,
  explicit: ExplicitTerms = {},
): ExtractedTerms {
  const text = `${summaryNfc}\n${payloadNfc}`;
  return {
    identifiers: identifiersOfNfc(text),
    files: explicit.files ?? filesOfNfc(text),
    commands: explicit.commands ?? commandsOfNfc(text),
    errors: explicit.errors ?? errorsOfNfc(text),
  };
}

/**
 * The reference term extraction over `NFC(summary) + "\n" + NFC(payload)`. Extracted lists are
 * sorted unique by code point; an explicit list replaces its extracted list and is returned as
 * given (unsorted, duplicates kept), because the reference stores it that way.
 *
 * @example
 * extractTerms('Deps', '$ npm install\nedited package.json');
 * // { identifiers: ['deps', 'edited', 'install', 'json', 'npm', 'package'],
 * //   files: ['package.js'], commands: ['npm install'], errors: [] }
 */
export function extractTerms(
  summary: string,
  payloadText: string,
  explicit?: ExplicitTerms,
): ExtractedTerms {
  return extractTermsNfc(summary.normalize('NFC'), payloadText.normalize('NFC'), explicit);
}

/**
 * The identifier extractor alone, on the NFC form of `text`: the "summary terms" of recall.
 *
 * @example
 * identifiersOf('PostgreSQL on Port 5433'); // ['5433', 'port', 'postgresql']
 */
export function identifiersOf(text: string): string[] {
  return identifiersOfNfc(text.normalize('NFC'));
}

/**
 * Matching terms of a node: identifiers ∪ folded files ∪ folded errors, sorted unique.
 *
 * @example
 * nodeTerms({ identifiers: ['billing'], files: ['V12__Tenant.sql'], errors: ['FATAL'] });
 * // ['billing', 'fatal', 'v12__tenant.sql']
 */
export function nodeTerms(t: {
  identifiers: string[];
  files: string[];
  errors: string[];
}): string[] {
  const out: string[] = [...t.identifiers];
  for (const f of t.files) out.push(foldToken(f));
  for (const e of t.errors) out.push(foldToken(e));
  return sortedUniqueByCodePoint(out);
}

/**
 * Query terms of a prompt (scan and recall): identifiers ∪ folded files ∪ folded errors of its
 * NFC form, sorted unique by code point.
 *
 * @example
 * queryTerms('Which port does PostgreSQL use?'); // ['does', 'port', 'postgresql', 'use']
 */
export function queryTerms(text: string): string[] {
  const nfc = text.normalize('NFC');
  return nodeTerms({
    identifiers: identifiersOfNfc(nfc),
    files: filesOfNfc(nfc),
    errors: errorsOfNfc(nfc),
  });
}
