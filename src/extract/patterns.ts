import {
  PY_LINE_START,
  PY_SPACE,
  PY_WORD,
  PY_WORD_END,
  PY_WORD_NOT_DIGIT,
  PY_WORD_START,
} from './python-text.js';

/**
 * The reference engine's extraction patterns, translated to Python `re` semantics (see
 * python-text.ts). Compiled once; `matchAll` clones a regex, so sharing them carries no state.
 * terms.ts scans identifiers and file runs by hand for speed; these regexes remain the
 * definition, and the tests check the scanners against them.
 */

/** `\b[^\W\d]\w{2,}\b|\b[0-9]{3,}\b` */
export const IDENTIFIER_RE = new RegExp(
  `${PY_WORD_START}(?:[${PY_WORD_NOT_DIGIT}][${PY_WORD}]{2,}|[0-9]{3,})${PY_WORD_END}`,
  'gu',
);

/**
 * `(?:[\w.-]+[/\\])+[\w.-]+\.[a-zA-Z0-9]+|[\w.-]+\.(?:py|js|ts|json|md|sql|sh|yml|yaml|html|css|rs|go|cs)`
 * The second alternative has no end check: `package.json` yields `package.js` (a v2 quirk).
 */
export const FILE_RE = new RegExp(
  `(?:[${PY_WORD}.\\-]+[/\\\\])+[${PY_WORD}.\\-]+\\.[a-zA-Z0-9]+` +
    `|[${PY_WORD}.\\-]+\\.(?:py|js|ts|json|md|sql|sh|yml|yaml|html|css|rs|go|cs)`,
  'gu',
);

/** Multiline `^\s*(?:\$|>)\s*([a-zA-Z0-9_.-]+(?:\s+[^;\n\r]+)?)`; `\s+` may cross a newline. */
export const COMMAND_RE = new RegExp(
  `${PY_LINE_START}[${PY_SPACE}]*(?:\\$|>)[${PY_SPACE}]*([a-zA-Z0-9_.\\-]+(?:[${PY_SPACE}]+[^;\\n\\r]+)?)`,
  'gu',
);

/**
 * `\b(?:[A-Z][a-zA-Z0-9]+Error|[A-Z][a-zA-Z0-9]+Exception|FATAL|PANIC|Traceback)\b`
 * `|HTTP\s+[45]\d{2}|\b[A-Z]{2,}_[A-Z0-9_]+_ERROR\b` (`\d` is any decimal digit, Nd).
 */
export const ERROR_RE = new RegExp(
  `${PY_WORD_START}(?:[A-Z][a-zA-Z0-9]+Error|[A-Z][a-zA-Z0-9]+Exception|FATAL|PANIC|Traceback)${PY_WORD_END}` +
    `|HTTP[${PY_SPACE}]+[45]\\p{Nd}{2}` +
    `|${PY_WORD_START}[A-Z]{2,}_[A-Z0-9_]+_ERROR${PY_WORD_END}`,
  'gu',
);
