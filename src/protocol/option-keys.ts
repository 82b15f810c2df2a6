// The refusal of an option nobody reads: a misspelt key (`budjet`, `aply`) was ignored and the
// default applied silently. Shared by the public entry points that take an options object.
import { UsageError } from './errors.js';

/** Every key of every member of a union (`keyof` of a union keeps only the shared ones). */
export type AllKeys<T> = T extends unknown ? keyof T : never;

/**
 * Throws a {@link UsageError} naming the keys of `options` that are not in `keys`, and the valid
 * ones. `what` is the function as the message names it.
 *
 * @example
 * checkOptionKeys('startProxy', { upstream, budjet: 8000 }, PROXY_OPTION_KEYS);
 * // UsageError: startProxy has no option 'budjet' (options: upstream, host, …)
 */
export function checkOptionKeys(what: string, options: object, keys: Record<string, true>): void {
  const unknown = Object.keys(options).filter((k) => !Object.hasOwn(keys, k));
  if (unknown.length > 0) {
    throw new UsageError(
      `${what} has no option ${unknown.map((k) => `'${k}'`).join(', ')} (options: ${Object.keys(keys).join(', ')})`,
    );
  }
}
