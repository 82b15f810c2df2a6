import { existsSync, lstatSync, readdirSync, statSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { EVENTS_FILE } from '../harness/session-events.js';
import { compareCodePoints } from '../protocol/canonical-json.js';
import { StoreNotFoundError } from '../protocol/errors.js';
import type { StoreInfo } from './api-types.js';

/**
 * Directories under which adapters keep one store per session (ai-sdk and the proxy under
 * `sessions/`, the Claude Code hook under `claude-code/`). The proxy's store of a session is
 * `sessions/<id>/.contextfold`.
 */
export const SESSION_PARENTS = ['sessions', 'claude-code'] as const;

const MARKERS = ['recall_index.json', 'recall_index.journal', 'cold_nodes', EVENTS_FILE];

/** True if a directory holds a store or a recorded session. */
export function isStoreDir(dir: string): boolean {
  return MARKERS.some((m) => existsSync(join(dir, m)));
}

/** True if the path is a symbolic link (which the discovery never follows out of the tree). */
function isLink(path: string): boolean {
  try {
    return lstatSync(path).isSymbolicLink();
  } catch {
    return false;
  }
}

function subdirs(dir: string): string[] {
  try {
    return readdirSync(dir, { withFileTypes: true })
      .filter((d) => d.isDirectory()) // symlinks are not followed out of the inspected tree
      .map((d) => d.name);
  } catch {
    return [];
  }
}

/**
 * The stores under an inspected directory: the directory itself if it is one, and each session
 * store under `sessions/<id>/` (ai-sdk middleware; `sessions/<id>/.contextfold` for the proxy)
 * and `claude-code/<id>/` (the hook), sorted by id. Symbolic links below the directory (a
 * `sessions/` or `<id>/.contextfold` that is one) are not followed: nothing outside the tree
 * given is served. Reads only. Throws a one-line {@link StoreNotFoundError} if there is none.
 *
 * @example
 * discoverStores('.contextfold'); // [{ id: '.', … }, { id: 'sessions/chat-1', … }]
 */
export function discoverStores(dir: string): StoreInfo[] {
  const root = resolve(dir);
  let isDir = false;
  try {
    isDir = statSync(root).isDirectory();
  } catch {}
  if (!isDir) {
    // The same error, code and wording as every other command on a missing store.
    throw new StoreNotFoundError(
      `no store at ${dir}: run contextfold fold … or contextfold import … to create one, or pass --dir DIR`,
      { path: root },
    );
  }
  const found: StoreInfo[] = [];
  const add = (id: string, d: string): void => {
    found.push({ id, dir: d, has_events: existsSync(join(d, EVENTS_FILE)) });
  };
  if (isStoreDir(root)) add('.', root);
  for (const parent of SESSION_PARENTS) {
    if (isLink(join(root, parent))) continue;
    for (const name of subdirs(join(root, parent))) {
      const d = join(root, parent, name);
      const proxy = join(d, '.contextfold');
      if (isStoreDir(d)) add(`${parent}/${name}`, d);
      else if (!isLink(proxy) && isStoreDir(proxy)) add(`${parent}/${name}`, proxy);
    }
  }
  if (found.length === 0) {
    throw new StoreNotFoundError(
      `${root} holds no contextfold store (no recall_index.json, cold_nodes/ or events.jsonl, nor sessions/*/ or claude-code/*/ stores)`,
      { path: root },
    );
  }
  return found.sort((a, b) => compareCodePoints(a.id, b.id));
}
