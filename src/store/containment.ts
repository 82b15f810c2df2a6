import { existsSync, lstatSync, realpathSync } from 'node:fs';
import { isAbsolute, join, resolve } from 'node:path';
import { PathContainmentError } from '../protocol/ipcf-errors.js';
import { canonicalNodePath, indexFilePath, type StoreLayout } from './layout.js';

/**
 * Checks an index entry's stored `file_path` against the canonical path for its step, always,
 * whatever `integrity_verification` says. Rejects absolute paths, `..`, backslashes, paths that
 * resolve anywhere but `cold_nodes/step_NNNNNN.json` of this store (sibling-prefix directories
 * such as `cold_nodes_evil/` included), and symlinks anywhere on the way that lead out of it.
 * Returns the absolute canonical path.
 */
export function checkContainment(layout: StoreLayout, stepId: number, filePath: unknown): string {
  const canonical = canonicalNodePath(layout, stepId);
  const fail = (why: string): never => {
    throw new PathContainmentError(
      `step ${stepId}: file_path ${JSON.stringify(filePath)} ${why}; expected ${indexFilePath(layout, stepId)}`,
      { stepId, path: typeof filePath === 'string' ? filePath : String(filePath) },
    );
  };
  if (typeof filePath !== 'string' || filePath.length === 0) return fail('is not a path');
  if (filePath.includes('\0')) return fail('contains a NUL byte');
  if (isAbsolute(filePath) || /^[A-Za-z]:/.test(filePath) || filePath.startsWith('/')) {
    return fail('is absolute');
  }
  if (filePath.includes('\\')) return fail('contains a backslash');
  if (filePath.split('/').some((seg) => seg === '..' || seg === '.')) {
    return fail('contains a relative segment');
  }
  if (filePath !== indexFilePath(layout, stepId))
    return fail('is not the canonical path for the step');
  if (resolve(layout.root, filePath) !== canonical) return fail('resolves outside the store');
  // Symlinks: neither the node file nor cold_nodes/ may be a link that leads elsewhere.
  let isLink = false;
  try {
    isLink = lstatSync(canonical).isSymbolicLink();
  } catch {}
  if (isLink) return fail('is a symlink');
  if (existsSync(layout.coldDir)) {
    const realCold = realpathSync(layout.coldDir);
    if (realCold !== join(realpathSync(layout.dir), 'cold_nodes')) {
      return fail(`lies under a symlinked cold_nodes resolving to ${realCold}`);
    }
  }
  return canonical;
}
