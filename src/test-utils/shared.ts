import { join } from 'node:path';
import { describe, it } from 'vitest';
import { HAS_SHARED, NEEDS_SHARED, SHARED_DIR } from './shared-location.js';

export { HAS_SHARED, NEEDS_SHARED, SHARED_DIR };

/**
 * `describe` for a suite that reads the shared data. Without it, one skipped test stands in
 * for the whole suite (its cases are often one per data file, so they cannot be counted), and
 * the run ends with one line naming every such suite and how to run it.
 *
 * @example
 * describeShared('reference scan vectors', () => { it('…', () => { … }); });
 */
export function describeShared(title: string, fn: () => void): void {
  if (HAS_SHARED) describe(title, fn);
  else describe(title, () => it.skip(`${NEEDS_SHARED} ${title}`, () => {}));
}

/** `it` for one test that reads the shared data (skipped and listed without it). */
export function itShared(title: string, fn: () => unknown, timeout?: number): void {
  if (HAS_SHARED) it(title, fn, timeout);
  else it.skip(`${NEEDS_SHARED} ${title}`, () => {});
}

/** Path inside the shared data. */
export function sharedPath(...parts: string[]): string {
  return join(SHARED_DIR, ...parts);
}
