// The checks of `ContextFold.open`'s options: a value of the wrong type is one UsageError naming
// the option, before anything is opened, instead of a node written with a numeric `session_id`,
// a TypeError from the first fold, or a flag read as its truthiness. The adapters that open
// their engine on first use (the MCP server, the middleware) run them when they are made.
import { UsageError } from '../protocol/errors.js';
import { checkOptionKeys } from '../protocol/option-keys.js';
import { parsePolicy } from '../protocol/policy.js';
import type { OpenOptions } from './types.js';

/** Every option `ContextFold.open` takes (the compiler keeps this list complete). */
const OPTION_KEYS: Record<keyof OpenOptions, true> = {
  dir: true,
  store: true,
  poolSize: true,
  statementTimeoutMs: true,
  mustExist: true,
  policy: true,
  tokenizer: true,
  sessionId: true,
  retrieval: true,
  clock: true,
  lockTimeoutMs: true,
  journalCompactThreshold: true,
  onWarning: true,
  readOnly: true,
  cacheDir: true,
  redact: true,
};

/** A bad value as the error shows it: a string quoted, so '30000' does not read as 30000. */
const shown = (value: unknown): string =>
  typeof value === 'string' ? JSON.stringify(value) : String(value);

function check(ok: boolean, name: string, what: string, value: unknown): void {
  if (!ok) throw new UsageError(`ContextFold.open: ${name} must be ${what}, got ${shown(value)}`);
}

/**
 * Throws a {@link UsageError} for an option it does not know (a misspelt `redcat: false` was
 * ignored: the default applied silently), or for the first option whose value has the wrong
 * type or range. Options left undefined take their defaults.
 *
 * @example
 * checkOpenOptions({ dir: '.contextfold', sessionId: 42 as never });
 * // UsageError: ContextFold.open: sessionId must be a string, got 42
 */
export function checkOpenOptions(options: OpenOptions): void {
  const where = options?.store ?? options?.dir;
  if (!options || typeof options !== 'object' || typeof where !== 'string' || where === '') {
    throw new UsageError(
      'ContextFold.open needs { dir } (the store directory, e.g. ".contextfold") or { store } (a directory or postgres:// URL)',
    );
  }
  const o = options as Record<string, unknown>;
  checkOptionKeys('ContextFold.open', o, OPTION_KEYS);
  const given = (name: string) => o[name] !== undefined;
  const integer = (name: string, min: number) => {
    const v = o[name];
    if (given(name))
      check(Number.isSafeInteger(v) && (v as number) >= min, name, `an integer >= ${min}`, v);
  };
  for (const name of ['mustExist', 'readOnly', 'redact']) {
    if (given(name)) check(typeof o[name] === 'boolean', name, 'true or false', o[name]);
  }
  for (const name of ['clock', 'onWarning']) {
    if (given(name)) check(typeof o[name] === 'function', name, 'a function', o[name]);
  }
  if (given('sessionId'))
    check(typeof o.sessionId === 'string', 'sessionId', 'a string', o.sessionId);
  if (given('retrieval')) {
    check(
      o.retrieval === 'ranked' || o.retrieval === 'reference',
      'retrieval',
      "'ranked' or 'reference'",
      o.retrieval,
    );
  }
  if (given('tokenizer')) {
    const t = o.tokenizer;
    check(
      t === 'o200k' ||
        t === 'reference' ||
        (typeof t === 'object' &&
          t !== null &&
          typeof (t as { count?: unknown }).count === 'function'),
      'tokenizer',
      "'o200k', 'reference' or a tokenizer object",
      o.tokenizer,
    );
  }
  if (given('policy')) parsePolicy(o.policy);
  integer('lockTimeoutMs', 0);
  integer('journalCompactThreshold', 0);
  integer('poolSize', 1);
  integer('statementTimeoutMs', 1);
}
