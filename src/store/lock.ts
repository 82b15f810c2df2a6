import { mkdirSync } from 'node:fs';
import lockfile from 'proper-lockfile';
import { LockTimeoutError } from '../protocol/errors.js';

/**
 * Runs `fn` holding the store's inter-process write lock (a lock directory beside the index,
 * via proper-lockfile: atomic `mkdir`, stale after 10 s without an mtime refresh).
 */
export async function withWriteLock<T>(
  storeDir: string,
  lockPath: string,
  timeoutMs: number,
  fn: () => Promise<T> | T,
): Promise<T> {
  mkdirSync(storeDir, { recursive: true });
  const deadline = Date.now() + timeoutMs;
  let release: (() => Promise<void>) | undefined;
  let delay = 2;
  for (;;) {
    try {
      release = await lockfile.lock(storeDir, {
        lockfilePath: lockPath,
        realpath: false,
        stale: 10_000,
        retries: 0,
        onCompromised: () => {},
      });
      break;
    } catch (e) {
      if ((e as NodeJS.ErrnoException).code !== 'ELOCKED') throw e;
      if (Date.now() > deadline) {
        throw new LockTimeoutError(
          `store is locked by another writer for more than ${timeoutMs} ms: ${lockPath} (if no contextfold process is running, remove that directory)`,
          { path: lockPath },
        );
      }
      await new Promise((r) => setTimeout(r, delay + Math.floor(Math.random() * delay)));
      delay = Math.min(delay * 2, 10);
    }
  }
  try {
    return await fn();
  } finally {
    await release();
  }
}

/** True while some process holds the write lock. */
export function isWriteLocked(storeDir: string, lockPath: string): boolean {
  try {
    return lockfile.checkSync(storeDir, { lockfilePath: lockPath, realpath: false, stale: 10_000 });
  } catch {
    return false;
  }
}
