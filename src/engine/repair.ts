import { existsSync, lstatSync } from 'node:fs';
import { join } from 'node:path';
import { appendDurable } from '../fs/durable-fs.js';
import { UsageError } from '../protocol/errors.js';
import { checkOptionKeys } from '../protocol/option-keys.js';
import { isoSeconds } from '../protocol/time.js';
import type { IndexEntry } from '../protocol/types.js';
import { canonicalNodePath, storeLayout } from '../store/layout.js';
import { isPgUrl } from '../store/pg/pg-url.js';
import type { ContextFold } from './context-fold.js';
import { isSymlink } from './store-repair.js';
import type { ValidationProblem } from './types.js';

/** File name of the repair log inside the store directory (one JSON action a line). */
export const REPAIR_LOG_FILE = 'repair_log.jsonl';

/**
 * One repair step. `reindex`: a verified orphan gets its index entry back; `quarantine`: a file
 * (or symlink) moves into `<store>/quarantine/`, bytes intact; `drop_entry`: an index entry
 * whose node is gone or untrustworthy is removed (journaled; once applied, `entry` is what it held).
 */
export type RepairAction =
  | { action: 'reindex'; step_id: number; path: string }
  | { action: 'quarantine'; step_id: number | null; path: string; to: string | null }
  | { action: 'drop_entry'; step_id: number; path: string; entry?: IndexEntry };

/** A problem `validate` reported and what repair does (or did) about it. */
export interface RepairItem {
  problem: ValidationProblem;
  actions: RepairAction[];
}

/** What {@link repairStore} found and did. */
export interface RepairResult {
  /** False for a dry run. */
  applied: boolean;
  items: RepairItem[];
  /** Problems `validate` still reports afterwards (dry run: the problems found). */
  remaining: ValidationProblem[];
  /** The repair log written to (null for a dry run or when nothing was done). */
  log: string | null;
}

/** Options of {@link repairStore}. */
export interface RepairOptions {
  /** Do it (default: a dry run that only plans). */
  apply?: boolean;
  /** Time stamp of log lines. Default: now. */
  now?: () => Date;
}

/** Every option {@link repairStore} takes (the compiler keeps this list complete). */
const REPAIR_OPTION_KEYS: Record<keyof RepairOptions, true> = { apply: true, now: true };

/** The node file a problem is about, when it concerns a step's canonical file. */
function nodeFileAction(engine: ContextFold, step: number, verified: boolean): RepairAction | null {
  const path = canonicalNodePath(storeLayout(engine.dir), step);
  if (!existsSync(path) && !isLinkPath(path)) return null;
  return verified
    ? { action: 'reindex', step_id: step, path }
    : { action: 'quarantine', step_id: step, path, to: null };
}

/** True if anything (a file, a directory, a dangling symlink) is at `path`. */
function isLinkPath(path: string): boolean {
  try {
    lstatSync(path);
    return true;
  } catch {
    return false;
  }
}

/** The actions for one problem, decided from the store as it is now. */
async function plan(engine: ContextFold, p: ValidationProblem): Promise<RepairAction[]> {
  const step = p.step_id;
  const verified = async (s: number) => 'entry' in (await engine.checkOrphan(s));
  const coldDir = storeLayout(engine.dir).coldDir;
  if (step !== null && isSymlink(coldDir)) {
    // A symlinked cold_nodes: the link itself is set aside, never the files it points at.
    return [
      ...(p.kind === 'orphaned_node'
        ? []
        : [{ action: 'drop_entry' as const, step_id: step, path: p.path }]),
      { action: 'quarantine', step_id: null, path: coldDir, to: null },
    ];
  }
  switch (p.kind) {
    case 'orphaned_node': {
      const a = nodeFileAction(engine, step!, await verified(step!));
      return a ? [a] : [];
    }
    case 'broken_reference':
      return [{ action: 'drop_entry', step_id: step!, path: p.path }];
    case 'integrity':
    case 'path_containment': {
      if (step === null) return [{ action: 'quarantine', step_id: null, path: p.path, to: null }];
      // The entry cannot be trusted; the canonical file is then judged on its own.
      const drop: RepairAction = { action: 'drop_entry', step_id: step, path: p.path };
      const file = nodeFileAction(engine, step, await verified(step));
      return file ? [drop, file] : [drop];
    }
    case 'journal':
    case 'index':
      // An unreadable index or journal: set it aside; the next round re-indexes verified nodes.
      return [{ action: 'quarantine', step_id: null, path: p.path, to: null }];
  }
}

/**
 * Runs one action; null when its problem went away since validate saw it. Validate does not hold
 * the write lock: what it reports may belong to a live fold between its node write and its
 * commit (an orphan, a temp file), which that fold then commits or renames before this action
 * gets the lock. Such an action is not an error and not logged; the next validate decides.
 */
async function run(engine: ContextFold, a: RepairAction): Promise<RepairAction | null> {
  switch (a.action) {
    case 'reindex':
      try {
        await engine.reindexOrphan(a.step_id);
      } catch (e) {
        if (await engine.entry(a.step_id)) return null; // its fold committed it meanwhile
        throw e;
      }
      return a;
    case 'drop_entry': {
      // The entry goes into the log whole: the hashes and path the node was checked against
      // are the evidence, and the next compaction removes them from recall_index.json.
      const entry = await engine.entry(a.step_id);
      await engine.dropEntry(a.step_id, `repair: ${a.path}`);
      return entry ? { ...a, entry } : a;
    }
    case 'quarantine':
      try {
        return { ...a, to: await engine.quarantine(a.path) };
      } catch (e) {
        // A temp file its writer renamed into place meanwhile: nothing left to move.
        if ((e as { code?: unknown }).code === 'ENOENT' && !isLinkPath(a.path)) return null;
        throw e;
      }
  }
}

const MAX_ROUNDS = 4;

/**
 * Plans (dry run) or applies the repair of every problem {@link ContextFold.validate} reports:
 * re-index a verified orphan, quarantine a tampered or foreign file into
 * `<store>/quarantine/`, drop an index entry whose node is gone or untrustworthy. Applying
 * appends every action to `<store>/repair_log.jsonl` and never deletes bytes; it re-validates
 * and repeats (an index set aside leaves orphans to re-index) until validate is clean.
 *
 * @example
 * const plan = await repairStore(engine);            // what would be done
 * const done = await repairStore(engine, { apply: true });
 * done.remaining.length; // 0
 */
export async function repairStore(
  engine: ContextFold,
  options: RepairOptions = {},
): Promise<RepairResult> {
  // A misspelt `aply: true` was a dry run that said nothing of it.
  checkOptionKeys('repairStore', options ?? {}, REPAIR_OPTION_KEYS);
  if (typeof engine?.validate !== 'function') {
    throw new UsageError(
      'repairStore needs an open engine: repairStore(await ContextFold.open({ dir }))',
    );
  }
  // A string is not a yes: apply: 'false' (from an environment variable) repaired the store.
  if (options.apply !== undefined && typeof options.apply !== 'boolean') {
    throw new UsageError(
      `repairStore apply must be true or false, got ${JSON.stringify(options.apply)}`,
    );
  }
  if (isPgUrl(engine.dir)) {
    // Orphans, strays and quarantine are files; a database store's fold is one transaction.
    throw new UsageError(
      `repair works on a store directory, not a database (${engine.dir}): run validate, and restore a damaged PostgreSQL store from its pg_dump backup`,
    );
  }
  const items: RepairItem[] = [];
  let v = await engine.validate();
  if (!options.apply) {
    for (const problem of v.problems) items.push({ problem, actions: await plan(engine, problem) });
    return { applied: false, items, remaining: v.problems, log: null };
  }
  const log = join(engine.dir, REPAIR_LOG_FILE);
  const now = options.now ?? (() => new Date());
  let wrote = false;
  for (let round = 0; round < MAX_ROUNDS && !v.ok; round++) {
    const done = new Set<string>();
    for (const problem of v.problems) {
      const actions: RepairAction[] = [];
      for (const a of await plan(engine, problem)) {
        const key = `${a.action}:${a.path}`;
        if (done.has(key)) continue;
        done.add(key);
        const r = await run(engine, a);
        if (!r) continue;
        actions.push(r);
        const at = isoSeconds(now());
        appendDurable(
          log,
          `${JSON.stringify({ version: 1, at, ...r, problem: problem.kind, message: problem.message })}\n`,
        );
        wrote = true;
      }
      items.push({ problem, actions });
    }
    v = await engine.validate();
  }
  return { applied: true, items, remaining: v.problems, log: wrote ? log : null };
}
