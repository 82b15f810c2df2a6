/**
 * A timestamp in the reference engine's form (UTC, whole seconds, `Z`). Used for `folded_at`,
 * `evicted_at` and event times; never hashed into a projection.
 *
 * @example
 * isoSeconds(new Date(0)); // '1970-01-01T00:00:00Z'
 */
export function isoSeconds(d: Date): string {
  return `${d.toISOString().slice(0, 19)}Z`;
}
