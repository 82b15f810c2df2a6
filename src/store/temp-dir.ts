import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { UsageError } from '../protocol/errors.js';

/**
 * A new temporary directory `<base>/<prefix>XXXXXX` (base: the OS temp directory, i.e. TMPDIR).
 * A base that is missing, a file or not writable is the user's setting to fix, so it is a usage
 * error naming it rather than mkdtemp's error and stack (demo, eval and conformance all start
 * here).
 *
 * @example
 * const root = makeTempDir('contextfold-demo-'); // '/tmp/contextfold-demo-a1B2c3'
 */
export function makeTempDir(prefix: string, base: string = tmpdir()): string {
  try {
    return mkdtempSync(join(base, prefix));
  } catch (e) {
    const code = (e as NodeJS.ErrnoException).code ?? 'error';
    throw new UsageError(
      `cannot create a temporary directory under ${base} (${code}): set TMPDIR to a writable directory`,
      { path: base },
    );
  }
}
