import { isUtf8 } from 'node:buffer';
import { createHash } from 'node:crypto';
import {
  closeSync,
  existsSync,
  fstatSync,
  fsyncSync,
  ftruncateSync,
  openSync,
  readFileSync,
  readSync,
  writeSync,
} from 'node:fs';
import { dirname } from 'node:path';
import type { ContextFoldEngine } from '../../engine/types.js';
import { writeFileAtomic } from '../../fs/durable-fs.js';
import { TranscriptReader, type TranscriptState } from '../../import/claude-code-transcript.js';
import type { OpenTurn, OpenTurnSegment } from '../../import/conversation-builder.js';
import { redactedFoldInputs, storableTurns } from '../../import/import-turns.js';
import type { ImportedTurn } from '../../import/turn.js';
import { isContextFoldError, LockTimeoutError, UsageError } from '../../protocol/errors.js';
import { IntegrityCheckError } from '../../protocol/ipcf-errors.js';
import { makeStoreDir } from '../../store/layout.js';
import { WriteLock } from '../../store/write-lock.js';

/** Version of the ingestion state file (version 1 files are read and rewritten as version 2). */
export const INGEST_STATE_VERSION = 2;

/** Bytes of the transcript before the offset whose hash tells a rewritten transcript. */
const TAIL_BYTES = 4096;

/** Uuids of the last rows read that the state file keeps (a row repeating one is read once). */
export const RECENT_UUIDS = 1024;

/** Skipped rows the state file keeps at most (the latest; an older one met again is reported again). */
export const MAX_SKIPPED_ROWS = 64;

/**
 * A complete transcript row the reader could not read (not valid JSON: Claude Code or the
 * machine stopped mid-write and later rows were appended; or not a row the reader understands),
 * skipped so the rows after it are still archived. The hook state keeps it, so it is reported
 * once, and a re-read of the transcript from the start, meeting it again, does not report it again.
 */
export interface SkippedRow {
  /** Byte offset of the row in the transcript. */
  offset: number;
  /** Its line number (1-based). */
  line: number;
  /** SHA-256 (hex) of the row's bytes (without its line feed). */
  sha256: string;
  /** What is wrong with it (the reader's message, without the path and line). */
  reason: string;
}

/**
 * What the hook remembers about a transcript between runs (`<session>.state.json`), bounded
 * whatever the session's length: every uuid read is in the uuid log beside it instead
 * ({@link uuidLogPath}), appended to and read only when the transcript is read again from the
 * start.
 */
export interface IngestState {
  version: number;
  transcript_path: string;
  /** Bytes of the transcript already read (always at a line boundary). */
  offset: number;
  /** Lines already read, for error messages. */
  lines: number;
  /** SHA-256 (hex) of the up to 4 KiB of the transcript before `offset`: a rewrite changes it. */
  tail_sha256: string;
  /** Bytes of the uuid log that hold the uuids read up to `offset` (later bytes are dropped). */
  uuids_bytes: number;
  /** The reader; its `seen_uuids` are the last {@link RECENT_UUIDS} read. */
  reader: TranscriptState;
  /** Rows skipped so far (the last {@link MAX_SKIPPED_ROWS}); absent when none was. */
  skipped_rows?: SkippedRow[];
}

/**
 * The uuid log of a state file: every conversation row uuid read, one JSON string a line, in
 * file order. The transcript is read again from the start (rewritten, or a new file for the
 * session) with all of them known, so rows already read are not read twice.
 *
 * @example
 * uuidLogPath('.contextfold/claude-code/abc.state.json'); // '.contextfold/claude-code/abc.state.uuids'
 */
export function uuidLogPath(statePath: string): string {
  return `${statePath.replace(/\.json$/u, '')}.uuids`;
}

/**
 * The lock of a state file: one ingestion of a session at a time, across processes (a hook
 * server's run and the run its client does itself after a timeout; two windows on one session).
 *
 * @example
 * stateLockPath('.contextfold/claude-code/abc.state.json'); // '.contextfold/claude-code/abc.state.lock'
 */
export function stateLockPath(statePath: string): string {
  return `${statePath.replace(/\.json$/u, '')}.lock`;
}

/** How long {@link ingestTranscript} waits for another run of the session by default. */
export const DEFAULT_INGEST_LOCK_TIMEOUT_MS = 10_000;

/** Options of {@link ingestTranscript}. */
export interface IngestOptions {
  transcriptPath: string;
  statePath: string;
  /**
   * `prompt`: fold turns that can no longer change; `compact` (before a compaction): also the
   * last turn when all its tool calls are answered.
   */
  mode: 'prompt' | 'compact';
  /** Stop reading after this many new turns (catching up on a long session spreads over runs). */
  maxTurns?: number;
  /** Read about this many bytes at most (default {@link DEFAULT_MAX_READ_BYTES}). */
  maxReadBytes?: number;
  /**
   * How long to wait while another run ingests the same session (its {@link stateLockPath}),
   * default {@link DEFAULT_INGEST_LOCK_TIMEOUT_MS}; then a `LockTimeoutError` naming the lock.
   */
  lockTimeoutMs?: number;
}

/** What one ingestion run did. */
export interface IngestResult {
  /** Turns folded in this run. */
  folded: number;
  /** Turns read so far in the whole transcript (= the next step id). */
  turns: number;
  /** Steps where a post-compaction conversation starts. */
  compactions: number[];
  /** True when the transcript has more unread lines (the `maxTurns` or byte limit was reached). */
  more: boolean;
  sessionId: string | null;
  /**
   * `missing`: there is no file at the transcript path (nothing was read or written).
   * `previouslyRead` then says whether earlier runs had read it (it disappeared) or not (a new
   * session: Claude Code creates the file after the first prompt).
   */
  transcript: 'read' | 'missing';
  previouslyRead: boolean;
  /** Rows first skipped in this run (complete rows the reader could not read; see {@link SkippedRow}). */
  skippedRows: SkippedRow[];
}

/**
 * A loaded state. `allUuids`: every uuid read, when known without the log (a version 1 file
 * holds them all; the next save writes them to a new log).
 */
type LoadedState = IngestState & { allUuids?: string[] };

function loadState(path: string, transcriptPath: string): LoadedState {
  if (!existsSync(path)) {
    return {
      version: INGEST_STATE_VERSION,
      transcript_path: transcriptPath,
      offset: 0,
      lines: 0,
      tail_sha256: '',
      uuids_bytes: 0,
      reader: emptyReader(),
    };
  }
  let s: LoadedState;
  try {
    s = JSON.parse(readFileSync(path, 'utf8')) as LoadedState;
  } catch {
    throw new IntegrityCheckError(
      `hook state file is not valid JSON: ${path}; move it away to re-read the transcript`,
      {
        path,
      },
    );
  }
  const v1 = s.version === 1;
  if (
    (s.version !== INGEST_STATE_VERSION && !v1) ||
    typeof s.offset !== 'number' ||
    typeof s.reader !== 'object' ||
    s.reader === null ||
    !Array.isArray(s.reader.seen_uuids) ||
    (!v1 && (typeof s.tail_sha256 !== 'string' || !Number.isSafeInteger(s.uuids_bytes))) ||
    (s.skipped_rows !== undefined && !validSkippedRows(s.skipped_rows))
  ) {
    throw new IntegrityCheckError(
      `hook state file has an unknown layout: ${path}; move it away to re-read the transcript`,
      {
        path,
      },
    );
  }
  if (v1) {
    // Version 1 kept every uuid in the state file: they move to the log on the next save.
    const all = s.reader.seen_uuids;
    s = {
      ...s,
      version: INGEST_STATE_VERSION,
      tail_sha256: '',
      uuids_bytes: 0,
      reader: { ...s.reader, seen_uuids: all.slice(-RECENT_UUIDS) },
      allUuids: all,
    };
  }
  if (s.transcript_path !== transcriptPath) {
    // A new transcript file for the same session (resume): read it from the start; rows already
    // read are recognised by uuid, so step ids continue where they were.
    return { ...s, transcript_path: transcriptPath, offset: 0, lines: 0, tail_sha256: '' };
  }
  return s;
}

/** Whether a state file's `skipped_rows` has the {@link SkippedRow} layout. */
function validSkippedRows(rows: unknown): boolean {
  return (
    Array.isArray(rows) &&
    rows.length <= MAX_SKIPPED_ROWS &&
    rows.every(
      (r) =>
        typeof r === 'object' &&
        r !== null &&
        Number.isSafeInteger(r.offset) &&
        Number.isSafeInteger(r.line) &&
        typeof r.sha256 === 'string' &&
        /^[0-9a-f]{64}$/u.test(r.sha256) &&
        typeof r.reason === 'string',
    )
  );
}

/** Every uuid of the log's first `bytes` bytes (the ones the state file covers). */
function readUuidLog(path: string, bytes: number): string[] {
  if (bytes === 0) return [];
  const broken = (why: string) =>
    new IntegrityCheckError(
      `hook uuid log ${why}: ${path}; move it and the .state.json beside it away to re-read the transcript`,
      { path },
    );
  if (!existsSync(path)) throw broken('is missing');
  const fd = openSync(path, 'r');
  let buf: Buffer;
  try {
    buf = readAt(fd, 0, bytes);
  } finally {
    closeSync(fd);
  }
  if (buf.length < bytes) throw broken(`is shorter than the ${bytes} bytes the state file covers`);
  const lines = buf.toString('utf8').split('\n');
  if (lines.pop() !== '') throw broken(`does not end a line at byte ${bytes}`);
  return lines.map((line, i) => {
    let uuid: unknown;
    try {
      uuid = JSON.parse(line);
    } catch {}
    if (typeof uuid !== 'string') throw broken(`line ${i + 1} is not a JSON string`);
    return uuid;
  });
}

/**
 * Writes `uuids` to the log after its first `from` bytes (dropping what a run that died before
 * saving its state appended) and syncs it; returns the log's new length.
 */
function appendUuidLog(path: string, from: number, uuids: readonly string[]): number {
  if (uuids.length === 0 && from === 0 && !existsSync(path)) return 0;
  const data = Buffer.from(uuids.map((u) => `${JSON.stringify(u)}\n`).join(''), 'utf8');
  const fd = openSync(path, existsSync(path) ? 'r+' : 'w');
  try {
    ftruncateSync(fd, from);
    let off = 0;
    while (off < data.length) off += writeSync(fd, data, off, data.length - off, from + off);
    fsyncSync(fd);
  } finally {
    closeSync(fd);
  }
  return from + data.length;
}

/**
 * The uuids the reader starts with: the recent ones when reading on from the offset, every one
 * read before when reading from the start again (the log is read only then).
 */
function knownUuids(state: LoadedState, start: number, statePath: string): string[] {
  if (state.allUuids) return state.allUuids;
  return start === 0
    ? readUuidLog(uuidLogPath(statePath), state.uuids_bytes)
    : state.reader.seen_uuids;
}

/**
 * The reader's look-up of a row older than the latest read whose uuid is not a recent one: is it
 * any uuid read before? `all`: every uuid, when already read; else the log is read on the first
 * look-up, so only a run that meets such a row (history written again) reads it.
 */
function olderSeen(
  state: LoadedState,
  all: string[] | null,
  statePath: string,
): (uuid: string) => boolean {
  let set: Set<string> | undefined;
  return (uuid) => {
    set ??= new Set(all ?? knownUuids(state, 0, statePath));
    return set.has(uuid);
  };
}

/** SHA-256 (hex) of the up to {@link TAIL_BYTES} bytes before `offset` ('' at 0). */
function tailHash(fd: number, offset: number): string {
  if (offset === 0) return '';
  const start = Math.max(0, offset - TAIL_BYTES);
  return createHash('sha256')
    .update(readAt(fd, start, offset - start))
    .digest('hex');
}

function emptyReader(): TranscriptState {
  return new TranscriptReader().state();
}

/** Whether the byte before `offset` is a line feed, as it is where the last run stopped reading. */
function endsLineAt(fd: number, offset: number): boolean {
  if (offset === 0) return true;
  const b = Buffer.alloc(1);
  return readSync(fd, b, 0, 1, offset - 1) === 1 && b[0] === 0x0a;
}

/** Bytes of the transcript one run reads at most (more when one line is longer). */
export const DEFAULT_MAX_READ_BYTES = 64 * 1024 * 1024;

/** Reads `length` bytes at `position` (fewer at the end of the file). */
function readAt(fd: number, position: number, length: number): Buffer {
  const buf = Buffer.alloc(length);
  let got = 0;
  while (got < length) {
    const n = readSync(fd, buf, got, length - got, position + got);
    if (n === 0) break;
    got += n;
  }
  return buf.subarray(0, got);
}

/**
 * Reads the bytes of the complete lines after `offset` (a line still being written is left for next time),
 * about `maxBytes` of them: a long backlog is read over several runs, never all at once (a
 * transcript of hundreds of MB would not fit in one string). `rest`: bytes were left unread.
 */
function readNewLines(
  path: string,
  offset: number,
  tail: string,
  maxBytes: number,
): { data: Buffer; start: number; rest: boolean } {
  const fd = openSync(path, 'r');
  try {
    const stat = fstatSync(fd);
    // A directory opens on Linux but fails to read (EISDIR): say what the path is instead.
    if (!stat.isFile()) {
      throw new UsageError(
        `${path}: the transcript_path is ${stat.isDirectory() ? 'a directory' : 'not a regular file'}, not a transcript file`,
        { path },
      );
    }
    const size = stat.size;
    // A transcript shorter than what was read, whose bytes before the offset changed (their
    // hash; a version 1 state has none) or no longer end a line, was rewritten: read it again
    // from the start (rows already read are known by uuid).
    const rewritten =
      size < offset || !endsLineAt(fd, offset) || (tail !== '' && tailHash(fd, offset) !== tail);
    const start = rewritten ? 0 : offset;
    if (size - start <= 0) return { data: Buffer.alloc(0), start, rest: false };
    let buf = readAt(fd, start, Math.min(size - start, maxBytes));
    let end = buf.lastIndexOf(0x0a);
    // One line longer than the limit: read on until it ends.
    while (end < 0 && start + buf.length < size) {
      buf = readAt(fd, start, Math.min(size - start, buf.length * 2));
      end = buf.lastIndexOf(0x0a);
    }
    // Stopped before the end of the file (not just before a line still being written).
    const rest = start + buf.length < size;
    return { data: buf.subarray(0, end + 1), start, rest };
  } finally {
    closeSync(fd);
  }
}

/** The texts of a segment, in a fixed order. */
function segmentTexts(s: OpenTurnSegment): string[] {
  if (s.kind === 'text') return [s.text];
  return s.result ? [s.input, s.result.content] : [s.input];
}

/** The segment with its texts replaced (in {@link segmentTexts} order). */
function withTexts(s: OpenTurnSegment, next: () => string): OpenTurnSegment {
  if (s.kind === 'text') return { ...s, text: next() };
  const input = next();
  return { ...s, input, result: s.result && { ...s.result, content: next() } };
}

/**
 * The reader state as the state file stores it: the text of turns still open (read but not
 * folded yet) is redacted, all of it together, like a fold would redact it, so the file under
 * the store never holds a secret. The next run continues from this form.
 */
async function storableState(
  state: TranscriptState,
  engine: ContextFoldEngine,
): Promise<TranscriptState> {
  if (!engine.redact || state.builder.open.length === 0) return state;
  const texts = state.builder.open.flatMap((t) => t.segments.flatMap(segmentTexts));
  const done = await engine.redactTexts(texts);
  let k = 0;
  const next = () => done[k++]!;
  const open: OpenTurn[] = state.builder.open.map((t) => ({
    ...t,
    segments: t.segments.map((s) => withTexts(s, next)),
  }));
  return { ...state, builder: { ...state.builder, open } };
}

/**
 * Writes the state after a run: the uuids first read in this run to the log (a version 1
 * state's all to a new log), then the state file, bounded (the last {@link RECENT_UUIDS} uuids,
 * open turns redacted) and naming the log's length and the hash of the bytes before `offset`.
 */
async function saveState(
  engine: ContextFoldEngine,
  options: IngestOptions,
  state: LoadedState,
  read: TranscriptState,
  knownCount: number,
  offset: number,
  lines: number,
  skipped: readonly SkippedRow[],
): Promise<void> {
  // The uuids first read in this run follow the ones the reader started with (a Set keeps
  // insertion order).
  const added = read.seen_uuids.slice(knownCount);
  const logPath = uuidLogPath(options.statePath);
  makeStoreDir(dirname(options.statePath));
  const uuidsBytes = state.allUuids
    ? appendUuidLog(logPath, 0, [...state.allUuids, ...added])
    : appendUuidLog(logPath, state.uuids_bytes, added);
  const fd = openSync(options.transcriptPath, 'r');
  let tail: string;
  try {
    tail = tailHash(fd, offset);
  } finally {
    closeSync(fd);
  }
  const next: IngestState = {
    version: INGEST_STATE_VERSION,
    transcript_path: options.transcriptPath,
    offset,
    lines,
    tail_sha256: tail,
    uuids_bytes: uuidsBytes,
    reader: await storableState(
      { ...read, seen_uuids: read.seen_uuids.slice(-RECENT_UUIDS) },
      engine,
    ),
    ...(skipped.length > 0 ? { skipped_rows: skipped.slice(-MAX_SKIPPED_ROWS) } : {}),
  };
  writeFileAtomic(options.statePath, JSON.stringify(next));
}

/**
 * Reads what was appended to a Claude Code transcript since the last run and folds the turns
 * that became final. Only the new bytes are parsed (the state file remembers the offset and the
 * reader's open turns), so a run costs the same on turn 20 and turn 2,000. State is saved after
 * the fold succeeded; a run that dies in between repeats an idempotent fold next time. Runs of
 * one session take turns (an OS lock, {@link stateLockPath}, released when its process dies), so
 * runs at once give the store and state that runs one after the other give. A complete row
 * the reader refuses (a torn write followed by later rows) is skipped and returned once in
 * `skippedRows` ({@link SkippedRow}); a last line without its line feed is left for the next run.
 *
 * @example
 * await ingestTranscript(engine, { transcriptPath, statePath, mode: 'prompt' });
 */
export async function ingestTranscript(
  engine: ContextFoldEngine,
  options: IngestOptions,
): Promise<IngestResult> {
  const timeoutMs = options.lockTimeoutMs ?? DEFAULT_INGEST_LOCK_TIMEOUT_MS;
  makeStoreDir(dirname(options.statePath));
  const lock = new WriteLock(stateLockPath(options.statePath));
  try {
    try {
      await lock.acquire(timeoutMs);
    } catch (e) {
      if (!(e instanceof LockTimeoutError)) throw e;
      throw new LockTimeoutError(
        `another run is reading this session's transcript for more than ${timeoutMs} ms: ${lock.path} (released when it ends)`,
        { path: lock.path },
      );
    }
    return await ingestLocked(engine, options);
  } finally {
    lock.close();
  }
}

/**
 * What earlier runs ingested, from the state file alone (the transcript is not read, nothing is
 * written): for a run that answers without ingesting, e.g. while another run holds the lock.
 */
export function ingestedSoFar(
  options: Pick<IngestOptions, 'transcriptPath' | 'statePath'>,
): IngestResult {
  const state = loadState(options.statePath, options.transcriptPath);
  return savedResult(state, existsSync(options.transcriptPath) ? 'read' : 'missing', true);
}

/** The result of a run that read nothing: what the saved state holds. */
function savedResult(
  state: LoadedState,
  transcript: IngestResult['transcript'],
  more: boolean,
): IngestResult {
  const reader = new TranscriptReader(state.reader);
  return {
    folded: 0,
    turns: reader.nextStep,
    compactions: [...reader.compactionSteps],
    more,
    sessionId: reader.session,
    transcript,
    previouslyRead: state.offset > 0,
    skippedRows: [],
  };
}

/** {@link ingestTranscript} under the session's lock. */
async function ingestLocked(
  engine: ContextFoldEngine,
  options: IngestOptions,
): Promise<IngestResult> {
  const state = loadState(options.statePath, options.transcriptPath);
  if (!existsSync(options.transcriptPath)) return savedResult(state, 'missing', false);
  const { data, start, rest } = readNewLines(
    options.transcriptPath,
    state.offset,
    state.tail_sha256,
    options.maxReadBytes ?? DEFAULT_MAX_READ_BYTES,
  );
  if (start !== state.offset) state.lines = 0;
  const known = knownUuids(state, start, options.statePath);
  const reader = new TranscriptReader(
    { ...state.reader, seen_uuids: known },
    olderSeen(state, start === 0 ? known : null, options.statePath),
  );
  // A row repeating a uuid read before the recent ones is in the log twice: count the distinct.
  const knownCount = new Set(known).size;
  const skipped = [...(state.skipped_rows ?? [])];
  const read = readLines(reader, data, {
    path: options.transcriptPath,
    start,
    lines: state.lines,
    limit: options.maxTurns ?? Number.POSITIVE_INFINITY,
    skipped,
  });
  const { turns, lineNo, consumed } = read;
  const more = rest || read.stopped;
  if (options.mode === 'compact' && !more) turns.push(...reader.flush('complete'));
  turns.sort((a, b) => a.step_id - b.step_id);
  // A lone surrogate (a tool output Claude Code cut mid-emoji) would fail every later prompt.
  if (turns.length > 0) {
    await engine.foldMany(await redactedFoldInputs(engine, storableTurns(turns).turns));
  }
  const offset = start + consumed;
  // Nothing read and nothing folded: the state file already holds this state (redacted), and
  // redacting it again would load the secret scanner on a prompt that changed nothing. A
  // version 1 state is rewritten once (its uuids move to the log).
  if (
    offset !== state.offset ||
    turns.length > 0 ||
    state.allUuids !== undefined ||
    !existsSync(options.statePath)
  ) {
    await saveState(engine, options, state, reader.state(), knownCount, offset, lineNo, skipped);
  }
  return {
    folded: turns.length,
    turns: reader.nextStep,
    compactions: [...reader.compactionSteps],
    more,
    sessionId: reader.session,
    transcript: 'read',
    previouslyRead: state.offset > 0,
    skippedRows: read.newlySkipped,
  };
}

/**
 * Reads the complete lines of `data` (read from byte `start`, after `lines` lines) until `limit`
 * turns became final. A row the reader refuses, or that is not valid UTF-8 (cut mid-character),
 * is skipped: added to `skipped` (and to `newlySkipped`) unless the same row at the same line was
 * skipped before (a re-read from the start). `consumed`: bytes of `data` read; `stopped`: the
 * limit left lines unread.
 */
function readLines(
  reader: TranscriptReader,
  data: Buffer,
  at: { path: string; start: number; lines: number; limit: number; skipped: SkippedRow[] },
): {
  turns: ImportedTurn[];
  lineNo: number;
  consumed: number;
  stopped: boolean;
  newlySkipped: SkippedRow[];
} {
  const turns: ImportedTurn[] = [];
  const newlySkipped: SkippedRow[] = [];
  let lineNo = at.lines;
  let pos = 0;
  let stopped = false;
  while (pos < data.length) {
    const nl = data.indexOf(0x0a, pos);
    // A byte order mark before the first line read is not part of the row (as a decoder drops it).
    const bom = pos === 0 && data[0] === 0xef && data[1] === 0xbb && data[2] === 0xbf ? 3 : 0;
    const bytes = data.subarray(pos + bom, nl);
    lineNo++;
    try {
      if (!isUtf8(bytes)) {
        throw new UsageError(`${at.path}:${lineNo}: not valid UTF-8`, { path: at.path });
      }
      turns.push(...reader.pushLine(bytes.toString('utf8'), lineNo, at.path));
    } catch (e) {
      const row = skippedRow(e, at.path, bytes, lineNo, at.start + pos);
      if (!at.skipped.some((r) => r.line === row.line && r.sha256 === row.sha256)) {
        at.skipped.push(row);
        newlySkipped.push(row);
      }
    }
    pos = nl + 1;
    if (turns.length >= at.limit && pos < data.length) {
      stopped = true;
      break;
    }
  }
  return { turns, lineNo, consumed: pos, stopped, newlySkipped };
}

/**
 * The record of the row at byte `offset` the reader refused (`error`, rethrown when it is not
 * the reader's refusal). Every line read is complete (a line still
 * being written is not read yet), so a refused one is skipped, not a reason to stop archiving.
 */
function skippedRow(
  error: unknown,
  path: string,
  line: Buffer,
  lineNo: number,
  offset: number,
): SkippedRow {
  if (!isContextFoldError(error) || error.code !== 'USAGE') throw error;
  const message = error.message;
  const where = `${path}:${lineNo}: `;
  return {
    offset,
    line: lineNo,
    sha256: createHash('sha256').update(line).digest('hex'),
    reason: message.startsWith(where) ? message.slice(where.length) : message,
  };
}
