import { existsSync, mkdtempSync, readdirSync, renameSync, rmSync, statSync } from 'node:fs';
import { basename, dirname, isAbsolute, join, relative, resolve, sep } from 'node:path';
import { makeDirs } from '../fs/make-dirs.js';
import { UsageError } from '../protocol/errors.js';
import { checkOptionKeys } from '../protocol/option-keys.js';
import type { ColdNode, IndexEntry } from '../protocol/types.js';
import type { CopySource } from '../store/copy-source.js';
import { isPgUrl } from '../store/pg/pg-url.js';
import { checkExtendsHead } from '../store/records-head.js';
import { ContextFold } from './context-fold.js';
import { syncedCopySource } from './synced-copy-source.js';

/** Options of {@link transferStore}. */
export interface TransferOptions {
  /** The store to copy: a directory or a `postgres://` URL. It must exist; it is only read. */
  from: string;
  /** The store to fill: a directory or a `postgres://` URL. It must hold no node yet. */
  to: string;
  /**
   * Told after each page of nodes: verified (the first pass, nothing written yet), then
   * written.
   */
  onProgress?: (done: number, total: number, phase: TransferPhase) => void;
}

/** Every option {@link transferStore} takes (the compiler keeps this list complete). */
const TRANSFER_OPTION_KEYS: Record<keyof TransferOptions, true> = {
  from: true,
  to: true,
  onProgress: true,
};

/** The pass of a copy: every node verified first, then written. */
export type TransferPhase = 'verifying' | 'writing';

/** What {@link transferStore} copied. */
export interface TransferResult {
  from: string;
  to: string;
  nodes: number;
  evictions: number;
  /** Session event lines copied (`events`). */
  events: number;
}

const PAGE = 500;
/**
 * The stored bytes of nodes a copy holds at once (a page of fewer than {@link PAGE} nodes when
 * they are large; at least one node): each is held as bytes, text and parsed node.
 */
export const PAGE_BYTES = 8 * 1024 * 1024;

/**
 * Copies a store to another backend node for node: every node is read and verified (all three
 * hashes) before anything is written, then written again verified, with the same bytes and the
 * same hashes; entries get the target's `file_path`; the eviction log and session events follow
 * in order. Into a database the whole copy is one transaction; into a directory the result is
 * compacted to the exact reference layout (`recall_index.json`, `eviction_log.json`), which the
 * reference engine reads.
 *
 * @example
 * await transferStore({ from: 'postgres://cf@db/cf?store_id=web', to: './export/.contextfold' });
 */
export async function transferStore(options: TransferOptions): Promise<TransferResult> {
  checkOptionKeys('transferStore', options ?? {}, TRANSFER_OPTION_KEYS);
  assertTargetDirectory(options.from, options.to);
  const source = await ContextFold.open({
    store: options.from,
    mustExist: true,
    readOnly: true,
    tokenizer: 'reference',
    retrieval: 'reference',
  });
  try {
    // A database store is paged straight from its tables: no mirror of the whole index.
    const copy = (await source.backend.copySource?.()) ?? (await syncedCopySource(source));
    try {
      const total = copy.total;
      // First pass: every node verified, nothing written yet (a bad node stops the copy here).
      let verified = 0;
      for await (const page of nodePages(copy)) {
        await copy.load(page.map((e) => e.step_id));
        for (const e of page) copy.verifyNode(e);
        verified += page.length;
        options.onProgress?.(verified, total, 'verifying');
      }
      // A new directory is written under a temporary name beside it and renamed into place
      // once complete: a copy that fails or is killed half-way leaves no partial store there.
      const staged = stagingFor(options.to);
      const forget = staged ? removeOnSignal(staged.root) : () => {};
      try {
        const r = await copyInto(source, copy, staged?.store ?? options.to, options.onProgress);
        if (!staged) return r;
        renameSync(staged.store, resolve(options.to));
        return { ...r, to: resolve(options.to) };
      } finally {
        forget();
        if (staged) rmSync(staged.root, { recursive: true, force: true });
      }
    } finally {
      await copy.close();
    }
  } finally {
    await source.close();
  }
}

/** The second pass: every page read again, verified and written into the store at `to`. */
async function copyInto(
  source: ContextFold,
  copy: CopySource,
  to: string,
  onProgress: TransferOptions['onProgress'],
): Promise<TransferResult> {
  const target = await ContextFold.open({
    store: to,
    tokenizer: 'reference',
    retrieval: 'reference',
  });
  try {
    const tgt = target.backend;
    if ((await target.entriesAfter({ limit: 1 })).length > 0) {
      throw new UsageError(
        `the target store already holds nodes: ${tgt.location} (export or import into an empty one)`,
        { path: tgt.location },
      );
    }
    // Read before anything is written: a log that no longer extends its head (cut short, its
    // last line changed) is refused, never copied under a new head.
    const events = await source.readRecords('events');
    if (events.head) {
      const lines = events.text.split('\n').slice(0, -1);
      checkExtendsHead(lines, events.head, events.path, events.headPath);
    }
    let evictions = 0;
    await tgt.write(async (tx) => {
      let done = 0;
      for await (const page of nodePages(copy)) {
        const nodes = await verifiedNodes(copy, page);
        await tx.writeNodes(nodes);
        await tx.commit(
          page.map((e, i) => ({
            entry: { ...e, file_path: tgt.entryFilePath(e.step_id), evicted: false },
            sanitized: nodes[i]!.sanitized === true,
          })),
        );
        done += page.length;
        onProgress?.(done, copy.total, 'writing');
      }
      for await (const page of copy.evictionPages()) {
        for (const ev of page) await tx.evict(ev.step_id, ev.evicted_at);
        evictions += page.length;
      }
    });
    if (events.text.length > 0) await target.appendRecords('events', events.text);
    return {
      from: source.backend.location,
      to: tgt.location,
      nodes: copy.total,
      evictions,
      events: events.text.split('\n').length - 1,
    };
  } finally {
    await target.close();
  }
}

/**
 * Where a copy into a directory is written first: a fresh temporary directory beside the
 * target, holding a store of the target's name (entries record `file_path` under the store's
 * name). Null for a database, or a target directory that already has content (an existing
 * store without nodes is filled in place, as before).
 */
function stagingFor(to: string): { root: string; store: string } | null {
  if (isPgUrl(to)) return null;
  const target = resolve(to);
  if (existsSync(target) && readdirSync(target).length > 0) return null;
  let root: string;
  try {
    makeDirs(dirname(target));
    root = mkdtempSync(join(dirname(target), `.${basename(target)}.copy-`));
  } catch (e) {
    // A directory the user cannot write is theirs to fix: one line, not mkdtemp's stack.
    const code = (e as NodeJS.ErrnoException).code;
    // ENOENT: a parent that exists but takes no new directories (`/proc`).
    if (code !== 'EACCES' && code !== 'EPERM' && code !== 'EROFS' && code !== 'ENOENT') throw e;
    let where = dirname(target);
    while (!existsSync(where) && dirname(where) !== where) where = dirname(where);
    throw new UsageError(
      `cannot write the copy to ${target} (${code}): check the permissions of ${where}, or choose another target directory`,
      { path: target },
    );
  }
  return { root, store: join(root, basename(target)) };
}

/** The signals that end a copy from outside: Ctrl-C, a terminal closed, `kill`. */
const STOP_SIGNALS = ['SIGINT', 'SIGHUP', 'SIGTERM'] as const;

/**
 * Removes the staging directory `root` if the process is stopped by a signal while the copy
 * writes it (no `finally` runs then, and nothing else would ever remove it: every copy stages
 * under a new name), then lets the signal end the process as it would have, unless the program
 * handles it itself. Returns the function that stops listening.
 */
function removeOnSignal(root: string): () => void {
  const onSignal = (signal: NodeJS.Signals): void => {
    forget();
    rmSync(root, { recursive: true, force: true });
    if (process.listenerCount(signal) === 0) process.kill(process.pid, signal);
  };
  const forget = (): void => {
    for (const s of STOP_SIGNALS) process.off(s, onSignal);
  };
  for (const s of STOP_SIGNALS) process.on(s, onSignal);
  return forget;
}

/**
 * Refuses a target directory the copy cannot or must not write: a path that is a file (its
 * listing would fail half-way through opening), or the source store itself or a directory inside
 * it (the copy's files would land among the source's own, which validate then reports).
 */
/** True when `path` is a file, or lies under one (its stat fails with ENOTDIR). */
function isFileOrUnderFile(path: string): boolean {
  try {
    return statSync(path, { throwIfNoEntry: false })?.isDirectory() === false;
  } catch (e) {
    if ((e as NodeJS.ErrnoException).code === 'ENOTDIR') return true;
    throw e;
  }
}

function assertTargetDirectory(from: string, to: string): void {
  for (const [name, where] of [
    ['from', from],
    ['to', to],
  ] as const) {
    if (typeof where !== 'string' || where === '') {
      throw new UsageError(
        `transferStore needs { from, to }: each a store directory or a postgres:// URL (${name} is ${where === '' ? 'empty' : String(where)})`,
      );
    }
  }
  if (isPgUrl(to)) return;
  const target = resolve(to);
  if (isFileOrUnderFile(target)) {
    throw new UsageError(
      `the target ${target} is (or is under) a file, not a directory: choose a new directory`,
      {
        path: target,
      },
    );
  }
  if (isPgUrl(from)) return;
  const rel = relative(resolve(from), target);
  if (!(rel === '..' || rel.startsWith(`..${sep}`) || isAbsolute(rel))) {
    throw new UsageError(
      `the target ${target} is inside the source store ${resolve(from)}: choose a directory outside it`,
      { path: target },
    );
  }
}

/**
 * Every entry of `source` in step order, in pages of at most {@link PAGE} entries whose nodes
 * add up to at most {@link PAGE_BYTES} stored bytes (a larger node is a page of its own).
 */
async function* nodePages(source: CopySource): AsyncGenerator<IndexEntry[]> {
  for await (const entries of source.entryPages(PAGE)) {
    const sizes = await source.nodeSizes(entries.map((e) => e.step_id));
    let page: IndexEntry[] = [];
    let bytes = 0;
    for (const e of entries) {
      const size = sizes.get(e.step_id) ?? 0;
      if (page.length > 0 && bytes + size > PAGE_BYTES) {
        yield page;
        page = [];
        bytes = 0;
      }
      page.push(e);
      bytes += size;
    }
    if (page.length > 0) yield page;
  }
}

/** The page's nodes, read again and verified (the bytes written are the bytes verified). */
async function verifiedNodes(src: CopySource, page: readonly IndexEntry[]): Promise<ColdNode[]> {
  await src.load(page.map((e) => e.step_id));
  return page.map((e) => src.verifyNode(e).node);
}
