import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { onTestFinished } from 'vitest';

/** A temp directory and how to remove it. */
export interface TempDir {
  dir: string;
  cleanup: () => void;
}

/**
 * A fresh temp directory (`<tmp>/<prefix>XXXXXX`). Made inside a running test, it is removed
 * when that test finishes; made at file or `describe` scope (no test is running), the caller
 * removes it: `afterAll(() => tmp.cleanup())`.
 *
 * @example
 * const dir = tempDir().dir;                 // inside a test: gone after it
 * const tmp = tempDir('cf-pack-');           // file scope
 * afterAll(() => tmp.cleanup());
 */
export function tempDir(prefix = 'cf-'): TempDir {
  const dir = mkdtempSync(join(tmpdir(), prefix));
  const cleanup = (): void => rmSync(dir, { recursive: true, force: true });
  try {
    onTestFinished(cleanup);
  } catch {
    // Not inside a test: the caller owns the directory.
  }
  return { dir, cleanup };
}
