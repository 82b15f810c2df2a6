import { existsSync, statSync } from 'node:fs';
import { basename, dirname, join } from 'node:path';
import { makeDirs } from '../fs/make-dirs.js';
import { UsageError } from '../protocol/errors.js';

/** Every path of one store, derived from its directory. */
export interface StoreLayout {
  /** The store directory itself (e.g. `/repo/.contextfold`). */
  dir: string;
  /** The directory `file_path` values are relative to (the store's parent). */
  root: string;
  coldDir: string;
  indexPath: string;
  journalPath: string;
  evictionLogPath: string;
  policyPath: string;
  lockPath: string;
}

/** File name of a step's cold node: `step_000137.json` (Python `f"step_{id:06d}.json"`). */
export function nodeFileName(stepId: number): string {
  return `step_${String(stepId).padStart(6, '0')}.json`;
}

/** Matches cold node file names and captures the step id. */
export const NODE_FILE_RE = /^step_(\d{6,})\.json$/;

/** The store's paths. `dir` must be absolute. */
export function storeLayout(dir: string): StoreLayout {
  return {
    dir,
    root: dirname(dir),
    coldDir: join(dir, 'cold_nodes'),
    indexPath: join(dir, 'recall_index.json'),
    journalPath: join(dir, 'recall_index.journal'),
    evictionLogPath: join(dir, 'eviction_log.json'),
    policyPath: join(dir, 'hydration_policy.json'),
    lockPath: join(dir, 'write.lock'),
  };
}

/**
 * The `file_path` the index records for a step, relative to the store's parent with forward
 * slashes: `.contextfold/cold_nodes/step_000137.json` for a store named `.contextfold`.
 */
export function indexFilePath(layout: StoreLayout, stepId: number): string {
  return `${basename(layout.dir)}/cold_nodes/${nodeFileName(stepId)}`;
}

/** Absolute canonical path of a step's cold node. */
export function canonicalNodePath(layout: StoreLayout, stepId: number): string {
  return join(layout.coldDir, nodeFileName(stepId));
}

/**
 * True when `dir` holds a store: its recall index, journal, cold node directory, policy or
 * eviction log. An empty or missing directory is not a store (read commands refuse it rather
 * than report an empty store, which a mistyped `--dir` would otherwise look like).
 */
export function storeExists(dir: string): boolean {
  const l = storeLayout(dir);
  return [l.indexPath, l.journalPath, l.coldDir, l.policyPath, l.evictionLogPath].some((p) =>
    existsSync(p),
  );
}

/**
 * Refuses a store directory that is a file, or lies under one: every read and write there fails
 * with ENOTDIR or EISDIR deep inside the store (an internal error, or a server that starts and
 * then fails each call); said once, when the store is opened, it is one line for the user.
 */
export function assertNotAFile(dir: string): void {
  let isFile: boolean;
  try {
    isFile = statSync(dir, { throwIfNoEntry: false })?.isDirectory() === false;
  } catch (e) {
    isFile = (e as NodeJS.ErrnoException).code === 'ENOTDIR';
    if (!isFile) throw e;
  }
  if (isFile) {
    throw new UsageError(`store directory ${dir} is (or is under) a file: choose another \`dir\``, {
      path: dir,
      option: 'dir',
    });
  }
}

/**
 * Creates a store directory (and its parents) if need be. One that cannot be created for lack of
 * rights (a parent not writable, a read-only file system, a parent like `/proc` that takes no
 * new directories) is the user's to fix: a usage line,
 * not mkdir's error and stack.
 */
export function makeStoreDir(dir: string): void {
  try {
    makeDirs(dir);
  } catch (e) {
    const code = (e as NodeJS.ErrnoException).code;
    // ENOENT: a parent that exists but takes no new directories (`/proc`).
    if (code !== 'EACCES' && code !== 'EPERM' && code !== 'EROFS' && code !== 'ENOENT') throw e;
    throw new UsageError(
      `store directory is not writable (${code}): ${dir} (check its permissions, or choose another \`dir\`)`,
      { path: dir, option: 'dir' },
    );
  }
}

/**
 * Refuses a store directory inside another store's `cold_nodes` (`--dir .contextfold/cold_nodes`,
 * a plausible guess at where a store is): its files would land among that store's nodes, which
 * validate then reports as unexpected entries.
 */
export function assertNotInColdNodes(dir: string): void {
  for (let p = dir; dirname(p) !== p; p = dirname(p)) {
    if (basename(p) === 'cold_nodes' && indexed(dirname(p))) {
      throw new UsageError(
        `store directory ${dir} is inside the cold_nodes of the store ${dirname(p)}: pass \`dir\` ${dirname(p)}`,
        { path: dir, option: 'dir' },
      );
    }
  }
}

/** True when `dir` has a store's index (a store's own files, not only a `cold_nodes`). */
function indexed(dir: string): boolean {
  const l = storeLayout(dir);
  return existsSync(l.indexPath) || existsSync(l.journalPath);
}
