import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { onTestFinished } from 'vitest';

/**
 * A fresh temp directory for the running test, removed when it finishes.
 *
 * @example
 * const dir = tempDir();
 */
export function tempDir(): string {
  const dir = mkdtempSync(join(tmpdir(), 'cf-'));
  onTestFinished(() => rmSync(dir, { recursive: true, force: true }));
  return dir;
}
