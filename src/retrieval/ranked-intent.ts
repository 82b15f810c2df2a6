import { foldToken } from '../extract/fold-token.js';
import type { PromptIntent } from '../protocol/results.js';

export type { PromptIntent } from '../protocol/results.js';

/** Words that point at the latest state. They are cues, never content keys. */
export const LATEST_CUES: ReadonlySet<string> = new Set(
  'now current currently latest last recent recently newest final finally anymore today'.split(' '),
);

/** Words that point at the earliest occurrence. They are cues, never content keys. */
export const EARLIEST_CUES: ReadonlySet<string> = new Set(
  'first initial initially originally original earliest beginning'.split(' '),
);

/** Words that ask about a failure (they stay content keys too: `error` is also a word). */
export const ERROR_CUES: ReadonlySet<string> = new Set(
  (
    'error errors errored fail fails failed failing failure failures why warning warnings warn ' +
    'warned broke broken refused refuse crash crashed exception denied complain complained ' +
    'wrong problem flag flagged reject rejected blocked'
  ).split(' '),
);

const WORD = /[\p{L}\p{N}']+/gu;
/** Phrases that point at the latest state. */
const LATEST_PHRASES = /\b(?:at this point|so far|as of now|right now|by now|these days|still)\b/iu;

/**
 * Reads the cues of a prompt.
 *
 * @example
 * promptIntent('Why did the first git add fail?'); // { time: 'earliest', error: true }
 * promptIntent('What port is it on now?'); // { time: 'latest', error: false }
 */
export function promptIntent(prompt: string): PromptIntent {
  let latest = false;
  let earliest = false;
  let error = false;
  // A word's cues depend on the word alone: a repeated word (most of a pasted log's) is read once.
  const read = new Set<string>();
  for (const m of prompt.matchAll(WORD)) {
    if (read.has(m[0])) continue;
    read.add(m[0]);
    const folded = foldToken(m[0]);
    const w = folded.replace(/'.*$/u, '');
    if (LATEST_CUES.has(w)) latest = true;
    if (EARLIEST_CUES.has(w)) earliest = true;
    if (ERROR_CUES.has(w) || /n't$/u.test(folded)) error = true;
    // Both time cues (they cancel out) and an error cue: no later word changes the answer.
    if (latest && earliest && error) break;
  }
  if (LATEST_PHRASES.test(prompt)) latest = true;
  const time = earliest && !latest ? 'earliest' : latest && !earliest ? 'latest' : 'none';
  return { time, error };
}

/** Lines that report a failure, in any of the usual shapes of tools and runtimes. */
export const ERROR_LINE =
  /(?<![a-z])(?:error|errno|exception|traceback|fatal|panic|failed|failure|denied|refused|not found|no such|cannot|can't|unable to|invalid|deprecated|warning|exceeds|exit code [1-9]|exit status [1-9])(?![a-z])|(?<![a-z])err!|\b[1-9]\d* failures?\b/iu;

/**
 * True if a payload reports a failure somewhere (used to favour such turns for error prompts).
 *
 * @example
 * hasErrorSignal('zsh: command not found: tree'); // true
 */
export function hasErrorSignal(text: string): boolean {
  return ERROR_LINE_CASED.test(text);
}

/**
 * Kinds of answer a prompt can ask for, each with the cue that asks for it and the shape that
 * answers it. A turn that has the shape is favoured when the prompt has the cue. Generic to
 * coding sessions; nothing here names a project, a tool vendor or a session.
 */
export interface AnswerShape {
  name: string;
  /** Matches the prompt when it asks for this kind of answer. */
  cue: RegExp;
  /** Matches a payload that holds such an answer. */
  shape: RegExp;
}

/** The answer shapes the ranked scan knows. */
export const ANSWER_SHAPES: readonly AnswerShape[] = [
  {
    name: 'hash',
    cue: /\b(?:hash|sha|commit id|revision)\b|\b(?:which|what|last|latest|recent|previous|first) commit\b/iu,
    shape: /(?<![\p{L}\p{N}])(?=[0-9a-f]*[a-f])(?=[0-9a-f]*[0-9])[0-9a-f]{7,40}(?![\p{L}\p{N}])/u,
  },
  {
    name: 'version',
    cue: /\bversions?\b|\bwhich (?:release|rev)\b/iu,
    shape: /(?<![\p{L}\p{N}.])v?\d+\.\d+(?:\.\d+)+(?![\p{N}])/u,
  },
  {
    name: 'test-result',
    cue: /\btests?\b|\bspecs?\b|\bsuite\b|\bgreen\b|\bpass(?:ed|ing)?\b/iu,
    shape: /\b\d+ (?:tests?|passed|failed|failures?|examples?|specs?|doctests?)\b/iu,
  },
  {
    name: 'quantity',
    cue: /\bhow (?:big|large|long|many|much)\b|\bsize\b|\bcount\b|\bnumber of\b|\bcost\b/iu,
    shape:
      /\b\d+(?:\.\d+)?\s?(?:[kmg]i?b|bytes?|tokens?|lines?|files?|chars?|characters?|ms|seconds?|minutes?|issues?|errors?|warnings?|insertions?|deletions?|items?)\b|\$\d/iu,
  },
  {
    name: 'command',
    cue: /\bcommands?\b|\bhow did (?:you|we|it) (?:check|run|verify|test|find|install|build|start|invoke|call|upload|fetch)\b|\bwhat did (?:you|we) (?:run|type|call|invoke)\b/iu,
    shape:
      /^\s*[$>] \S|"(?:command|cmd)"\s*:|\bBash\(|^Running \S|```(?:bash|sh|shell|console)\n/imu,
  },
  {
    name: 'line',
    cue: /\b(?:which|what) line\b|\bline numbers?\b/iu,
    shape: /[\p{L}\p{N}_-]\.[\p{L}\p{N}]+:\d+\b|^\s*\d+:\S/mu,
  },
  {
    name: 'port',
    cue: /\bports?\b/iu,
    shape: /\bport\b\D{0,4}\d{2,5}\b|:\d{4,5}\b/iu,
  },
];

/**
 * Names of the answer shapes a prompt asks for.
 *
 * @example
 * askedShapes('What is the short hash of that commit?'); // ['hash']
 */
export function askedShapes(prompt: string): string[] {
  return ANSWER_SHAPES.filter((s) => s.cue.test(prompt)).map((s) => s.name);
}

/**
 * V8 matches a pattern with the `i` and `u` flags several times slower than one without `i`, so
 * the patterns run on every payload (failure lines, answer shapes) are also written without it,
 * matching exactly what the definitions above match (a property test compares them). Under
 * `iu`, an ASCII letter matches both its cases, `s` also matches ſ (U+017F) and `k` also K
 * (U+212A), the only other characters whose case folds into ASCII; and `\b` counts those two as
 * word characters.
 */
const WORD_CHARS = 'A-Za-z0-9_\\u017f\\u212a';
const LETTER = 'a-zA-Z\\u017f\\u212a';
/** `\b` before a word character. */
const START = `(?<![${WORD_CHARS}])`;
/** `\b` after a word character. */
const END = `(?![${WORD_CHARS}])`;

/** Letters of a pattern written without `i`: `tests?` → `[tT][eE][sSſ][tT][sSſ]?`. */
function anyCase(pattern: string): string {
  const folds: Record<string, string> = { s: '\\u017f', k: '\\u212a' };
  return pattern.replace(/[a-z]/g, (c) => `[${c}${c.toUpperCase()}${folds[c] ?? ''}]`);
}

/** {@link ERROR_LINE} without the `i` flag. */
const ERROR_LINE_CASED = new RegExp(
  `(?<![${LETTER}])(?:${anyCase(
    "error|errno|exception|traceback|fatal|panic|failed|failure|denied|refused|not found|no such|cannot|can't|unable to|invalid|deprecated|warning|exceeds|exit code [1-9]|exit status [1-9]",
  )})(?![${LETTER}])|(?<![${LETTER}])${anyCase('err')}!|${START}[1-9]\\d* ${anyCase('failures?')}${END}`,
  'u',
);

/** Each answer shape's `shape` pattern without the `i` flag (the same where it had none). */
export const SHAPE_PATTERNS: readonly RegExp[] = ANSWER_SHAPES.map((s) => {
  switch (s.name) {
    case 'test-result':
      return new RegExp(
        `${START}\\d+ (?:${anyCase('tests?|passed|failed|failures?|examples?|specs?|doctests?')})${END}`,
        'u',
      );
    case 'quantity':
      return new RegExp(
        `${START}\\d+(?:\\.\\d+)?\\s?(?:[kKmMgG\\u212a][iI]?[bB]|${anyCase(
          'bytes?|tokens?|lines?|files?|chars?|characters?|ms|seconds?|minutes?|issues?|errors?|warnings?|insertions?|deletions?|items?',
        )})${END}|\\$\\d`,
        'u',
      );
    case 'command':
      return new RegExp(
        `^\\s*[$>] \\S|"(?:${anyCase('command|cmd')})"\\s*:|${START}${anyCase('bash')}\\(|^${anyCase('running')} \\S|\`\`\`(?:${anyCase('bash|sh|shell|console')})\\n`,
        'mu',
      );
    case 'port':
      return new RegExp(
        `${START}${anyCase('port')}${END}\\D{0,4}\\d{2,5}${END}|:\\d{4,5}${END}`,
        'u',
      );
    default:
      return s.shape;
  }
});

/**
 * Names of the answer shapes a payload holds.
 *
 * @example
 * heldShapes('[main 0925f8d] Modernize project'); // ['hash']
 */
export function heldShapes(text: string): string[] {
  return ANSWER_SHAPES.filter((_, i) => SHAPE_PATTERNS[i]!.test(text)).map((s) => s.name);
}
