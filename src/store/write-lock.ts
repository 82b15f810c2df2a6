import Database from 'better-sqlite3';
import { LockTimeoutError, UsageError } from '../protocol/errors.js';
import { makeStoreDir } from './layout.js';

const isBusy = (e: unknown): boolean => {
  const code = (e as { code?: unknown }).code;
  return code === 'SQLITE_BUSY' || code === 'SQLITE_LOCKED';
};

const sleep = (ms: number) => new Promise<void>((r) => setTimeout(r, ms));

/** How long a writer waits for the lock before it says that it waits (`onWait`). */
export const LOCK_WAIT_NOTICE_MS = 2_000;

/** A function to call on every poll of a wait: calls `onWait` once the wait is long. */
export function waitNotice(onWait?: () => void): () => void {
  const at = Date.now() + LOCK_WAIT_NOTICE_MS;
  let told = onWait === undefined;
  return () => {
    if (told || Date.now() < at) return;
    told = true;
    onWait!();
  };
}

/**
 * The store's inter-process write lock: an exclusive SQLite transaction on a small database file
 * beside the index (`write.lock`), i.e. an OS byte-range lock. The kernel releases it when the
 * holder dies, however it dies, and it never goes stale while held: no timers, no refresh, no
 * lock directory to clean up. Waiting polls without blocking the event loop.
 *
 * One instance is one lock handle; two instances (in one process or two) exclude each other.
 *
 * @example
 * const lock = new WriteLock('/repo/.contextfold/write.lock');
 * await lock.acquire(30_000);
 * try { … } finally { lock.release(); }
 */
export class WriteLock {
  readonly path: string;
  #db: Database.Database | undefined;
  #held = false;

  constructor(path: string) {
    this.path = path;
  }

  /** True while this handle holds the lock. */
  get held(): boolean {
    return this.#held;
  }

  #open(): Database.Database {
    if (!this.#db) {
      const db = openLockFile(this.path);
      // The lock database is never written: keep its rollback journal in memory (no extra file).
      db.pragma('journal_mode = MEMORY');
      this.#db = db;
    }
    return this.#db;
  }

  /** Takes the lock if it is free. Returns whether it was taken. */
  tryAcquire(): boolean {
    if (this.#held) throw new Error('WriteLock.tryAcquire: already held by this handle');
    try {
      this.#open().exec('BEGIN EXCLUSIVE');
    } catch (e) {
      if (isBusy(e)) return false;
      throw e;
    }
    this.#held = true;
    return true;
  }

  /**
   * Waits until the lock is free and takes it, polling every few milliseconds (with jitter, so
   * waiters do not march in step). Throws {@link LockTimeoutError} after `timeoutMs`. `onWait`
   * is called once if the wait passes {@link LOCK_WAIT_NOTICE_MS}, to say why nothing happens.
   */
  async acquire(timeoutMs: number, onWait?: () => void): Promise<void> {
    const deadline = Date.now() + timeoutMs;
    const notice = waitNotice(onWait);
    let delay = 1;
    while (!this.tryAcquire()) {
      notice();
      if (Date.now() > deadline) {
        throw new LockTimeoutError(
          `store is locked by another writer for more than ${timeoutMs} ms: ${this.path} (a long batch may still be running; the lock is released when its process ends)`,
          { path: this.path },
        );
      }
      await sleep(delay + Math.random() * delay);
      delay = Math.min(delay * 2, 8);
    }
  }

  /** Releases the lock (a no-op if not held). */
  release(): void {
    if (!this.#held) return;
    this.#held = false;
    this.#db?.exec('ROLLBACK');
  }

  /** True if some handle (this one included) holds the lock right now. */
  isLocked(): boolean {
    if (this.#held) return true;
    if (!this.tryAcquire()) return true;
    this.release();
    return false;
  }

  /** Releases the lock and closes the file. */
  close(): void {
    this.release();
    this.#db?.close();
    this.#db = undefined;
  }
}

/**
 * The lock's database file. One that cannot be created (a read-only store directory, a path
 * under a file) is the user's to fix: a usage line, not SQLite's "unable to open database file"
 * with its stack.
 */
function openLockFile(path: string): Database.Database {
  try {
    return new Database(path, { timeout: 0 });
  } catch (e) {
    if ((e as { code?: unknown }).code !== 'SQLITE_CANTOPEN') throw e;
    throw new UsageError(
      `store directory is not writable: cannot create its lock file ${path} (check its permissions, or choose another \`dir\`)`,
      { path, option: 'dir' },
    );
  }
}

/**
 * Runs `fn` holding the lock at `lockPath` (a {@link WriteLock} file, created in `dir` if need
 * be), released when `fn` settles or its process dies.
 *
 * @example
 * await withWriteLock(dir, join(dir, 'events.jsonl.lock'), 10_000, () => appendDurable(path, text));
 */
export async function withWriteLock<T>(
  dir: string,
  lockPath: string,
  timeoutMs: number,
  fn: () => Promise<T> | T,
): Promise<T> {
  makeStoreDir(dir);
  const lock = new WriteLock(lockPath);
  try {
    await lock.acquire(timeoutMs);
    return await fn();
  } finally {
    lock.close();
  }
}
