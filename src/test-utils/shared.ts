import { existsSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';

/** Absolute path of `../shared` beside the repository (CI lays it there). */
export const SHARED_DIR = fileURLToPath(new URL('../../../shared/', import.meta.url));

/** True when ../shared is present; tests that need it skip with a visible message otherwise. */
export const HAS_SHARED = existsSync(join(SHARED_DIR, 'vectors'));

if (!HAS_SHARED) {
  console.warn(
    `[contextfold tests] ${SHARED_DIR} is absent: tests that read ../shared are skipped`,
  );
}

/** Path inside ../shared. */
export function sharedPath(...parts: string[]): string {
  return join(SHARED_DIR, ...parts);
}

/** A fresh temporary directory; returns it and a cleanup function. */
export function tempDir(prefix = 'cf-'): { dir: string; cleanup: () => void } {
  const dir = mkdtempSync(join(tmpdir(), prefix));
  return { dir, cleanup: () => rmSync(dir, { recursive: true, force: true }) };
}
