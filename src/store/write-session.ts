// The write path of a LocalStore under its write lock: node files, then journal records (the
// commit point), then the same records applied to the index, compacting when the journal grew.
import { existsSync, rmSync, unlinkSync } from 'node:fs';
import { appendDurable, fsyncDir, writeFilesDurable } from '../fs/durable-fs.js';
import { canonicalJson, prettyJson } from '../protocol/canonical-json.js';
import { isoSeconds } from '../protocol/time.js';
import type { ColdNode, IndexEntry } from '../protocol/types.js';
import { type CompactionContext, compactLocked } from './compaction.js';
import { fileIdentity } from './file-identity.js';
import type { CommitRow, IndexWarning, WriteSession } from './index-backend.js';
import type { IndexDb, IndexState } from './index-db.js';
import { dropRow } from './index-loader.js';
import { foldRecordJson, type JournalRecord, journalLine } from './journal.js';
import { canonicalNodePath } from './layout.js';
import { commitFlags } from './node-flag.js';

/** What the write path reaches of its store (which holds it as private state). */
export interface WriteContext extends CompactionContext {
  /** The store's read of one entry (through its read cache). */
  get(step: number): IndexEntry | undefined;
  /** Passes a warning on to the store's owner (once per kind and message). */
  warn(w: IndexWarning): void;
  /** Brings the store's read cache in step with the index. */
  followChanges(): void;
}

/** The session a writer gets while it holds the write lock (and the index is fresh). */
export function writeSession(ctx: WriteContext): WriteSession {
  // Node files this session wrote that no commit names yet: removed if the commit fails.
  const uncommitted: string[] = [];
  return {
    get: (step) => ctx.get(step),
    nodeExists: (step) => existsSync(canonicalNodePath(ctx.layout, step)),
    writeNodes: (nodes) => writeNodes(ctx, nodes, uncommitted),
    commit: (rows) => commit(ctx, rows, uncommitted),
    evict: (step, at) => evict(ctx, step, at),
    drop: (step, at, reason) => drop(ctx, step, at, reason),
  };
}

async function writeNodes(
  ctx: WriteContext,
  nodes: readonly ColdNode[],
  uncommitted: string[],
): Promise<void> {
  const files = nodes.map((n) => ({
    path: canonicalNodePath(ctx.layout, n.step_id),
    data: prettyJson(n),
  }));
  await writeFilesDurable(files);
  uncommitted.push(...files.map((f) => f.path));
}

/**
 * Appends records to the journal (fsynced: the commit point), then applies them to the index
 * in one transaction. An append that fails (a full disk) commits nothing: the journal is cut
 * back (removed if this append created it) and the session's uncommitted node files are
 * removed, so the same fold can run again once the cause is fixed, instead of leaving part of
 * a batch committed and the rest orphaned. A failure after the append cannot undo the commit:
 * the index is marked for rebuild from the files instead.
 */
async function append(
  ctx: WriteContext,
  records: JournalRecord[],
  apply: (db: IndexDb, st: IndexState) => void,
  uncommitted: string[],
  jsons?: readonly string[],
): Promise<void> {
  ctx.assertConsistent();
  const gen = ctx.gen;
  const path = ctx.layout.journalPath;
  const st = { ...gen.state };
  let text = '';
  let created = false;
  if (st.journalStale) {
    unlinkSync(path);
    st.journalStale = false;
    st.journal = null;
  }
  if (st.journal === null) {
    st.journalOffset = 0;
    st.journalLines = 0;
    st.journalRecords = 0;
    st.createdAt ??= isoSeconds(ctx.options.clock());
    text += journalLine({
      op: 'base',
      snapshot_sha256: st.snapshotSha256,
      created_at: st.createdAt,
    });
    created = true;
  }
  records.forEach((r, i) => {
    text += journalLine(r, jsons?.[i]);
  });
  try {
    appendDurable(path, text);
    if (created) fsyncDir(ctx.layout.dir);
  } catch (e) {
    if (created) rmSync(path, { force: true });
    for (const p of uncommitted.splice(0)) rmSync(p, { force: true });
    throw e;
  }
  uncommitted.length = 0;
  // Committed. Everything below is derived.
  const db = gen.db!;
  try {
    db.transaction(() => {
      apply(db, st);
      st.journal = fileIdentity(path);
      st.journalOffset += Buffer.byteLength(text, 'utf8');
      st.journalLines += records.length + (created ? 1 : 0);
      st.journalRecords += records.length;
      db.setState(st);
    });
    gen.state = st;
    ctx.followChanges();
  } catch (e) {
    gen.broken = `applying a commit to ${gen.dbName} failed (${(e as Error).message})`;
    ctx.warn({ code: 'INDEX_REBUILT', message: gen.broken, path: gen.indexPath ?? '' });
    return;
  }
  const snapshotSize = st.entries - st.journalRecords;
  if (st.journalRecords > Math.max(ctx.options.compactThreshold, snapshotSize)) {
    // Housekeeping after the commit: its failure (a full disk) must not report the committed
    // fold as failed. The journal still holds the records; the next writer compacts again.
    try {
      await compactLocked(ctx);
    } catch (e) {
      ctx.warn({
        code: 'COMPACTION_FAILED',
        message: `compacting the journal into recall_index.json failed (${(e as Error).message}); the commit stands and a later write compacts again`,
        path: ctx.layout.indexPath,
      });
    }
  }
}

async function commit(
  ctx: WriteContext,
  rows: readonly CommitRow[],
  uncommitted: string[],
): Promise<void> {
  if (rows.length === 0) return;
  // Each entry is serialised once: for its journal record and for its index row.
  const jsons = rows.map((r) => canonicalJson(r.entry));
  await append(
    ctx,
    rows.map((r) => ({ op: 'fold' as const, entry: r.entry })),
    (db, st) => {
      db.putTokens(
        rows.flatMap((r) =>
          r.tokens
            ? [
                {
                  payload_sha256: r.entry.payload_sha256,
                  tokenizer: r.tokens.tokenizer,
                  count: r.tokens.count,
                },
              ]
            : [],
        ),
      );
      db.putFlags(commitFlags(rows));
      db.insertFolds(
        rows.map((r, i) => ({ entry: r.entry, json: jsons[i]!, analysis: r.analysis })),
        st,
      );
    },
    uncommitted,
    jsons.map(foldRecordJson),
  );
}

async function evict(ctx: WriteContext, step: number, evictedAt: string): Promise<void> {
  await append(
    ctx,
    [{ op: 'evict', step_id: step, evicted_at: evictedAt }],
    (db, st) => {
      const json = db.entryJson(step);
      if (json === undefined) throw new Error(`step ${step} is not indexed`);
      const entry = JSON.parse(json) as IndexEntry;
      db.evict(step, canonicalJson({ ...entry, evicted: true }), evictedAt, entry.evicted, st);
    },
    [],
  );
}

async function drop(
  ctx: WriteContext,
  step: number,
  droppedAt: string,
  reason: string,
): Promise<void> {
  await append(
    ctx,
    [{ op: 'drop', step_id: step, dropped_at: droppedAt, reason }],
    (db, st) => {
      if (!dropRow(db, st, step, ctx.options.analyzer?.keyOf)) {
        throw new Error(`step ${step} is not indexed`);
      }
    },
    [],
  );
}
