import { existsSync, mkdtempSync, rmdirSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { UsageError } from '../../protocol/errors.js';

/**
 * Refuses, before the proxy listens, a store root where no session store can be created (a
 * directory not writable, a read-only file system, a parent like `/proc` that takes no new
 * directories): one usage line, instead of a proxy that starts and fails every call with a 500.
 * It creates a directory in the deepest existing level of `<root>/sessions` and removes it at
 * once, so nothing is left behind (a store root that does not exist yet is not created).
 *
 * @example
 * checkStoreRoot('/proc/x/.contextfold'); // throws: store directory is not writable (ENOENT): …
 */
export function checkStoreRoot(root: string): void {
  let at = join(root, 'sessions');
  while (!existsSync(at) && dirname(at) !== at) at = dirname(at);
  try {
    rmdirSync(mkdtempSync(join(at, '.contextfold-write-check-')));
  } catch (e) {
    const code = (e as NodeJS.ErrnoException).code ?? 'error';
    throw new UsageError(
      `store directory is not writable (${code}): ${root} (check its permissions, or choose another \`dir\`)`,
      { path: root, option: 'dir' },
    );
  }
}
