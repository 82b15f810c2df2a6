import { closeSync, existsSync, openSync, readFileSync, readSync } from 'node:fs';
import { canonicalJson } from '../protocol/canonical-json.js';
import { checkEvictionLog, checkRecallIndex } from '../protocol/schemas.js';
import { type IndexEntry, IPCF_VERSION, PROJECTION_VERSION } from '../protocol/types.js';
import { fileIdentity } from './file-identity.js';
import type { FoldRow, IndexDb, IndexState, LoadProblem } from './index-db.js';
import { parseEntry } from './index-entry.js';
import { type JournalRecord, parseJournal } from './journal.js';
import type { StoreLayout } from './layout.js';
import { readSnapshot } from './snapshot-reader.js';

export type { LoadProblem } from './index-db.js';

/** The content address of a node's analysis under the current analyzer (absent: none kept). */
export type AnalysisKeyOf = (entry: Pick<IndexEntry, 'payload_sha256' | 'summary'>) => string;

/** Inserts entries, attaching the analyses the index already holds for their content. */
export function insertEntries(
  db: IndexDb,
  state: IndexState,
  rows: readonly { entry: IndexEntry; json: string }[],
  akeyOf: AnalysisKeyOf | undefined,
): void {
  if (rows.length === 0) return;
  let found = new Map<string, FoldRow['analysis'] & object>();
  const keys = akeyOf ? rows.map((r) => akeyOf(r.entry)) : [];
  if (akeyOf) found = db.analyses([...new Set(keys)]);
  db.insertFolds(
    rows.map((r, i) => ({ ...r, analysis: akeyOf ? found.get(keys[i]!) : undefined })),
    state,
  );
}

/**
 * Removes a dropped step from the index (its ranked postings found through its analysis when
 * the index holds one). Returns false when the step is not indexed.
 */
export function dropRow(
  db: IndexDb,
  state: IndexState,
  step: number,
  akeyOf: AnalysisKeyOf | undefined,
): boolean {
  const json = db.entryJson(step);
  if (json === undefined) return false;
  const entry = JSON.parse(json) as IndexEntry;
  const akey = akeyOf?.(entry);
  const analysis = akey === undefined ? undefined : db.analyses([akey]).get(akey);
  db.drop(step, analysis?.terms, state);
  return true;
}

/**
 * Applies journal records (folds, evictions and drops, in order) to the index. Returns why the
 * journal cannot be applied (a fold of an indexed step with other content, an eviction or drop
 * of an unknown step, a malformed entry), or null. Records before the offending one are applied.
 */
export function applyRecords(
  db: IndexDb,
  state: IndexState,
  records: readonly JournalRecord[],
  akeyOf: AnalysisKeyOf | undefined,
): string | null {
  let batch: { entry: IndexEntry; json: string }[] = [];
  const inBatch = new Map<number, string>();
  const flush = () => {
    insertEntries(db, state, batch, akeyOf);
    batch = [];
    inBatch.clear();
  };
  for (const rec of records) {
    if (rec.op === 'fold') {
      const parsed = parseEntry(rec.entry);
      if (!parsed.ok) return `journal fold record ${parsed.reason}`;
      const step = parsed.entry.step_id;
      const had = inBatch.get(step) ?? db.entryJson(step);
      if (had !== undefined) {
        if (had === parsed.json) continue;
        return `journal folds step ${step} again with different content`;
      }
      batch.push(parsed);
      inBatch.set(step, parsed.json);
    } else if (rec.op === 'evict') {
      flush();
      const json = db.entryJson(rec.step_id);
      if (json === undefined) return `journal evicts step ${rec.step_id}, which is not indexed`;
      const entry = JSON.parse(json) as IndexEntry;
      const evicted = canonicalJson({ ...entry, evicted: true });
      db.evict(rec.step_id, evicted, rec.evicted_at, entry.evicted, state);
    } else if (rec.op === 'drop') {
      flush();
      if (!dropRow(db, state, rec.step_id, akeyOf)) {
        return `journal drops step ${rec.step_id}, which is not indexed`;
      }
    } else {
      return 'journal has a second base record';
    }
  }
  flush();
  return null;
}

/** Snapshot entries inserted per write transaction. */
const SNAPSHOT_ROUND = 1024;

/**
 * Loads `recall_index.json` into an empty index, streaming (bounded memory, the event loop gets
 * a turn per chunk). Sets the snapshot fields of `state`. Returns the load problem, if any.
 */
export async function loadSnapshot(
  db: IndexDb,
  state: IndexState,
  layout: StoreLayout,
  akeyOf: AnalysisKeyOf | undefined,
): Promise<LoadProblem | null> {
  const path = layout.indexPath;
  const identity = fileIdentity(path);
  state.snapshot = identity;
  if (identity === null) return null;
  const fields: Record<string, unknown> = {};
  let problem: string | null = null;
  // Rows are inserted per SNAPSHOT_ROUND entries, not per chunk read (about 100 entries): each
  // transaction writes every index page its postings touch.
  let rows: { entry: IndexEntry; json: string }[] = [];
  const flush = () => {
    const round = rows;
    rows = [];
    db.transaction(() => insertEntries(db, state, round, akeyOf));
  };
  const read = await readSnapshot(path, (members) => {
    if (problem) return;
    for (const m of members) {
      if (m.kind === 'field') {
        fields[m.key] = m.value;
        continue;
      }
      const parsed = parseEntry(m.value);
      if (!parsed.ok) {
        problem = `recall index entry ${m.key} ${parsed.reason}`;
        return;
      }
      if (String(parsed.entry.step_id) !== m.key) {
        problem = `recall index key ${m.key} holds step_id ${parsed.entry.step_id}`;
        return;
      }
      rows.push(parsed);
    }
    if (rows.length >= SNAPSHOT_ROUND) flush();
  });
  if (!problem) flush();
  if (!read.ok) {
    return {
      kind: 'index',
      path,
      message: `recall index is not valid JSON (truncated or corrupted: ${read.reason}): ${path}`,
    };
  }
  if (problem) return { kind: 'index', path, message: `${problem}: ${path}` };
  const bad = checkRecallIndex(fields);
  if (bad) return { kind: 'index', path, message: `recall index is malformed at ${bad}: ${path}` };
  const versions = otherVersions(fields);
  if (versions) return { kind: 'index', path, message: `${versions}: ${path}` };
  state.snapshotSha256 = read.sha256;
  state.createdAt = typeof fields.created_at === 'string' ? fields.created_at : null;
  return null;
}

/**
 * Why a recall index of another IPCF or projection version cannot be read here, or null: its
 * hashes and fields follow rules this engine does not know, and a compaction would rewrite its
 * header as this version's (a silent downgrade), so it is refused like any inconsistent state.
 */
function otherVersions(fields: Record<string, unknown>): string | null {
  const ipcf = fields.ipcf_version;
  const projection = fields.projection_version;
  if (ipcf === IPCF_VERSION && projection === PROJECTION_VERSION) return null;
  return (
    `recall index is written for IPCF ${String(ipcf)} (${String(projection)}); this contextfold ` +
    `reads IPCF ${IPCF_VERSION} (${PROJECTION_VERSION}) only: use the version that wrote the store`
  );
}

/** Loads `eviction_log.json` (if any) into the index. Returns the load problem, if any. */
export function loadEvictionLog(
  db: IndexDb,
  state: IndexState,
  layout: StoreLayout,
): LoadProblem | null {
  const path = layout.evictionLogPath;
  state.evictionLog = fileIdentity(path);
  if (!existsSync(path)) return null;
  let parsed: unknown;
  try {
    parsed = JSON.parse(readFileSync(path, 'utf8'));
  } catch {
    return { kind: 'index', path, message: `eviction log is not valid JSON: ${path}` };
  }
  const bad = checkEvictionLog(parsed);
  if (bad) return { kind: 'index', path, message: `eviction log is malformed at ${bad}: ${path}` };
  const list = (parsed as { evicted: { step_id: number; evicted_at: string }[] }).evicted;
  db.transaction(() =>
    db.logEvictions(list.map((e) => ({ step_id: e.step_id, evicted_at: e.evicted_at }))),
  );
  return null;
}

function readFrom(path: string, offset: number, length: number): Buffer {
  const chunk = Buffer.alloc(length);
  const fd = openSync(path, 'r');
  let got = 0;
  try {
    while (got < length) {
      const n = readSync(fd, chunk, got, length - got, offset + got);
      if (n === 0) break;
      got += n;
    }
  } finally {
    closeSync(fd);
  }
  return chunk.subarray(0, got);
}

/**
 * Steps whose journal records (a fold, an eviction) the index loaded from the snapshot does not
 * hold: a compaction's snapshot holds them all (an entry a later `drop` removed excepted).
 */
function unreflectedSteps(db: IndexDb, recs: readonly JournalRecord[]): number[] {
  const want = new Map<number, { artifact: string; evicted: boolean }>();
  for (const r of recs) {
    if (r.op === 'fold')
      want.set(r.entry.step_id, { artifact: r.entry.artifact_sha256, evicted: r.entry.evicted });
    else if (r.op === 'drop') want.delete(r.step_id);
    else if (r.op === 'evict') {
      const w = want.get(r.step_id);
      if (w) w.evicted = true;
      else want.set(r.step_id, { artifact: '', evicted: true });
    }
  }
  const lost: number[] = [];
  for (const [step, w] of want) {
    const json = db.entryJson(step);
    const e = json === undefined ? undefined : (JSON.parse(json) as IndexEntry);
    if (
      !e ||
      (w.artifact !== '' && e.artifact_sha256 !== w.artifact) ||
      (w.evicted && !e.evicted)
    ) {
      lost.push(step);
    }
  }
  return lost.sort((a, b) => a - b);
}

/**
 * Applies what was appended to the journal since `state.journalOffset` (all of it from 0) and
 * advances the offset past every complete, valid line. Call holding the write lock: a torn last
 * line is then certainly torn (its writer is gone) and reported, never skipped.
 */
export function catchUpJournal(
  db: IndexDb,
  state: IndexState,
  layout: StoreLayout,
  akeyOf: AnalysisKeyOf | undefined,
): LoadProblem | null {
  const path = layout.journalPath;
  const identity = fileIdentity(path);
  if (identity === null) {
    state.journal = null;
    return null;
  }
  const start = state.journalOffset;
  const bytes = readFrom(path, start, Math.max(0, identity.size - start));
  const parsed = parseJournal(bytes.toString('utf8'), state.journalLines + 1);
  let recs = parsed.records;
  let problem: LoadProblem | null = null;
  if (start === 0 && recs.length > 0) {
    const base = recs[0]!;
    if (base.op !== 'base') {
      state.journal = identity;
      return {
        kind: 'journal',
        path,
        message: `journal does not start with its base record: ${path}`,
      };
    }
    if (base.snapshot_sha256 !== state.snapshotSha256) {
      // A compaction committed (snapshot renamed) but died before removing the journal: every
      // record is already in the snapshot. The next writer removes it. A snapshot rewritten by
      // another engine (the reference folding while this journal was open) lacks some: then
      // the journal is refused, never dropped with the folds it committed.
      state.journal = identity;
      const lost = unreflectedSteps(db, recs.slice(1));
      if (lost.length > 0) {
        return {
          kind: 'journal',
          path,
          message: `journal extends another recall_index.json (rewritten since, e.g. by another engine), which lacks its records for step(s) ${lost.slice(0, 10).join(', ')}${lost.length > 10 ? ', …' : ''}; run 'contextfold repair': ${path}`,
        };
      }
      state.journalStale = true;
      state.journalOffset = identity.size;
      return null;
    }
    state.createdAt ??= base.created_at;
    recs = recs.slice(1);
  }
  const err = applyRecords(db, state, recs, akeyOf);
  if (err) {
    state.journal = identity;
    return { kind: 'journal', path, message: `${err}: ${path}` };
  }
  state.journalOffset = start + parsed.consumed;
  state.journalLines += parsed.records.length;
  state.journalRecords += recs.length;
  // The identity read, torn or corrupt tail included: unchanged, it needs no second look.
  state.journal = identity;
  if (parsed.invalid) {
    problem = {
      kind: 'journal',
      path,
      message: `journal line ${parsed.invalid.line} is corrupt (${parsed.invalid.reason}): ${path}`,
    };
  } else if (parsed.tornTail) {
    problem = {
      kind: 'journal',
      path,
      message: `journal ends in a torn record after line ${state.journalLines} (a fold was interrupted; nothing after it is trusted): ${path}`,
      torn: true,
    };
  }
  return problem;
}
