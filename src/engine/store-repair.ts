// The file side of repair on a store directory: an orphaned node checked on its own, and a file
// moved into quarantine. The engine keeps the repair operations themselves (the write lock,
// the journal); these are the parts that read and move files, apart from the engine's reads.
import { existsSync, lstatSync, mkdirSync, readFileSync, realpathSync, renameSync } from 'node:fs';
import { dirname, isAbsolute, join, relative, resolve, sep } from 'node:path';
import { fsyncDir } from '../fs/durable-fs.js';
import { UsageError } from '../protocol/errors.js';
import { IntegrityCheckError } from '../protocol/ipcf-errors.js';
import { checkIndexEntry } from '../protocol/schemas.js';
import type { ColdNode, IndexEntry } from '../protocol/types.js';
import { indexEntryFor } from '../store/cold-node.js';
import { canonicalNodePath, indexFilePath, type StoreLayout } from '../store/layout.js';
import { verifyNode } from '../store/verify.js';
import type { EngineStore } from './open-store.js';

/** The store's directory; repair's file operations refuse a database store. */
export function localLayout(layout: StoreLayout | null, dir: string, doing: string): StoreLayout {
  if (layout) return layout;
  throw new UsageError(`${doing} works on a store directory, not a database: ${dir}`);
}

/**
 * The index entry a step's canonical cold node file would get, checked as if it had no entry:
 * valid JSON, the step it names, index fields, every hash verified. Throws what refuses it.
 */
export function orphanEntry(layout: StoreLayout, stepId: number): IndexEntry {
  const path = canonicalNodePath(layout, stepId);
  const bad = (why: string): never => {
    throw new IntegrityCheckError(`step ${stepId}: ${why}: ${path}`, { stepId, path });
  };
  let node: unknown;
  try {
    node = JSON.parse(readFileSync(path, 'utf8'));
  } catch {
    return bad('cold node file is unreadable or not valid JSON');
  }
  if (typeof node !== 'object' || node === null || (node as ColdNode).step_id !== stepId) {
    return bad('cold node file does not hold this step');
  }
  const entry = indexEntryFor(node as ColdNode, indexFilePath(layout, stepId));
  if (checkIndexEntry(entry)) return bad('cold node file lacks index fields');
  verifyNode(layout, entry);
  return entry;
}

/**
 * Moves `path` (inside the store, never through a symlink out of it) into `quarantine/` under
 * the write lock, keeping its relative path (see `ContextFold.quarantine`). Returns the new path.
 */
export async function quarantineFile(
  store: EngineStore,
  layout: StoreLayout,
  path: string,
): Promise<string> {
  const abs = resolve(layout.root, path);
  const rel = relative(layout.dir, abs);
  if (rel === '' || rel.startsWith('..') || isAbsolute(rel) || rel.split(sep)[0] === 'quarantine') {
    throw new UsageError(`only a file inside the store can be quarantined, not ${abs}`);
  }
  const realParent = realpathSync(dirname(abs));
  const realStore = realpathSync(layout.dir);
  if (realParent !== realStore && !realParent.startsWith(realStore + sep)) {
    throw new UsageError(
      `${abs} lies under a symlink leading out of the store; quarantine the link instead`,
    );
  }
  return store.write(() => {
    let to = join(layout.dir, 'quarantine', rel);
    for (let n = 1; existsSync(to) || isSymlink(to); n++)
      to = join(layout.dir, 'quarantine', `${rel}.${n}`);
    mkdirSync(dirname(to), { recursive: true });
    renameSync(abs, to);
    fsyncDir(dirname(to));
    fsyncDir(dirname(abs));
    return to;
  });
}

/** True when `path` is a symbolic link (a missing path is not). */
export function isSymlink(path: string): boolean {
  try {
    return lstatSync(path).isSymbolicLink();
  } catch {
    return false;
  }
}
