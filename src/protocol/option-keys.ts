// The refusal of an option nobody reads: a misspelt key (`budjet`, `aply`) was ignored and the
// default applied silently. Shared by the public entry points that take an options object.
import { UsageError } from './errors.js';

/** Every key of every member of a union (`keyof` of a union keeps only the shared ones). */
export type AllKeys<T> = T extends unknown ? keyof T : never;

/**
 * Throws a {@link UsageError} naming the keys of `options` that are not in `keys`, and the valid
 * ones; or when `options` is not an object. `what` is the function as the message names it,
 * `noun` what a key is (`field` for an input object). Allocates nothing when every key is known
 * (a per-call check on the scan path).
 *
 * @example
 * checkOptionKeys('startProxy', { upstream, budjet: 8000 }, PROXY_OPTION_KEYS);
 * // UsageError: startProxy has no option 'budjet' (options: upstream, host, …)
 */
export function checkOptionKeys(
  what: string,
  options: object,
  keys: Record<string, true>,
  noun = 'option',
): void {
  if (typeof options !== 'object' || options === null) {
    throw new UsageError(`${what} ${noun}s must be an object, got ${String(options)}`);
  }
  for (const k in options) {
    if (!Object.hasOwn(keys, k) && Object.hasOwn(options, k)) refuse(what, options, keys, noun);
  }
}

function refuse(what: string, options: object, keys: Record<string, true>, noun: string): never {
  const unknown = Object.keys(options).filter((k) => !Object.hasOwn(keys, k));
  throw new UsageError(
    `${what} has no ${noun} ${unknown.map((k) => `'${k}'`).join(', ')} (${noun}s: ${Object.keys(keys).join(', ')})`,
  );
}
