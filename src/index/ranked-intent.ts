import { foldToken } from '../extract/fold-token.js';

/**
 * What a prompt says beyond its content keys: which end of the history it points at, and
 * whether it asks about a failure. Cue words are generic English, not tied to any session.
 */
export interface PromptIntent {
  /** `latest`: "now", "current", "last time"; `earliest`: "first", "initially"; else `none`. */
  time: 'latest' | 'earliest' | 'none';
  /** The prompt asks about an error, failure or warning. */
  error: boolean;
}

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
  for (const m of prompt.matchAll(WORD)) {
    const w = foldToken(m[0]).replace(/'.*$/u, '');
    if (LATEST_CUES.has(w)) latest = true;
    if (EARLIEST_CUES.has(w)) earliest = true;
    if (ERROR_CUES.has(w) || /n't$/u.test(foldToken(m[0]))) error = true;
  }
  const time = earliest && !latest ? 'earliest' : latest && !earliest ? 'latest' : 'none';
  return { time, error };
}

/** Lines that report a failure, in any of the usual shapes of tools and runtimes. */
const ERROR_LINE =
  /(?<![a-z])(?:error|errno|exception|traceback|fatal|panic|failed|failure|denied|refused|not found|no such|cannot|can't|unable to|invalid|deprecated|warning|exceeds|exit code [1-9]|exit status [1-9])(?![a-z])|\b[1-9]\d* failures?\b/iu;

/**
 * True if a payload reports a failure somewhere (used to favour such turns for error prompts).
 *
 * @example
 * hasErrorSignal('zsh: command not found: tree'); // true
 */
export function hasErrorSignal(text: string): boolean {
  return ERROR_LINE.test(text);
}
