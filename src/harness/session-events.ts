import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { z } from 'zod';
import type { ContextFoldEngine } from '../engine/types.js';
import { lastLine } from '../fs/last-line.js';
import type { FindingSummary } from '../guard/types.js';
import { sha256Hex } from '../protocol/canonical-json.js';
import { isContextFoldError, UsageError } from '../protocol/errors.js';
import { IntegrityCheckError } from '../protocol/ipcf-errors.js';
import type { FoldedStep } from '../protocol/types.js';
import {
  appendWithHead,
  checkExtendsHead,
  headFilePath,
  notAFile,
  type RecordsHead,
  readHeadFile,
} from '../store/records-head.js';
import { fileSize, type RecordsMark, recordsMark } from '../store/records-mark.js';
import { withWriteLock } from '../store/write-lock.js';
import type { CompressionNote } from './compress.js';
import type { LiveExcerptNote, LiveOverflow } from './live-excerpt.js';
import type { HistoryRecord } from './messages.js';
import { parseHistoryRecord } from './messages.js';
import type { TruncationNote } from './pack.js';
import { stableJson } from './render.js';

/** The session policy in effect, as recorded (integers only: replay compares it exactly). */
export interface SessionConfig {
  budget: number;
  keep_recent: number;
  fold_threshold: number;
  high_water_tokens: number;
  low_water_tokens: number;
  page_reserve: number;
  tokenizer: string;
  summarizer: 'default' | 'custom';
  /**
   * What a pack does with a live turn larger than the budget (see `LiveOverflow`). Absent in
   * logs written before the option existed: those sessions sent it whole, and replay does too.
   */
  live_overflow?: LiveOverflow;
  /**
   * How turns get their step ids: `turns` (the turn's position among the turns, the rule of
   * the importers and the Claude Code hook too). Absent in logs written before the rule was
   * unified: those sessions number a turn by its first message's history position and fold the
   * rendered messages, and keep doing so when reopened or replayed (`TurnStepIds`).
   */
  step_ids?: 'turns';
  /**
   * `kept`: the live exchange is more than L0 (the user request a tool loop works on, the tool
   * turn a prompt follows without a reply): never folded or dropped while live, excerpted with
   * L0, and an oversized live part is planned at half the room so L2 and L1 are not all given
   * up to it. Absent in logs written before the rule: their sessions could fold the request of
   * a running tool loop, and replay does too.
   */
  live_task?: 'kept';
  /**
   * `strict`: a pack goes over its budget only when what it can neither leave out nor cut (L3,
   * the live part as cut, the pages) does not fit, and its warning names those parts; pages are
   * admitted beside the live exchange's earlier turns too. Absent in logs written before the
   * rule: an oversized live part the excerpt could not bring down to half the room kept L2 and L1
   * items beside it (a pack could end a few tokens over), and replay does the same.
   */
  pack_budget?: 'strict';
  /**
   * `bounded`: every field of a folded-step record is bounded (`buildFoldedStep`): at most 12
   * `target_files` of at most 160 code points each (a longer path keeps its end after `…`),
   * the files left out counted in `target_files_omitted`, and a timestamp's second fraction cut
   * to nine digits. Absent in logs written before the rule: twelve paths of any length, the
   * rest left out without a count, and replay does the same.
   */
  record_fields?: 'bounded';
  /**
   * `sha256`: from this `session_opened` line on, every line of the log carries `prev`, the
   * SHA-256 (hex) of the previous line's bytes (of the empty string for a log's first line), and
   * a log whose chain breaks is refused ({@link parseEvents}). Absent in logs written before the
   * chain: their lines carry no `prev` and are read as before.
   */
  log_chain?: 'sha256';
  /**
   * `sha256`: the log has a head outside it (`events.jsonl.head`, or a database row), rewritten
   * with every append: its line count and the SHA-256 of its last line. From this (chained)
   * `session_opened` line on, a log must extend its head, and a log without one is refused
   * ({@link readEvents}). Absent in logs written before the head: they are read and replayed
   * as before (a head, when there is one, is still checked).
   */
  log_head?: 'sha256';
}

/** Archived blocks removed from one incoming message. */
export interface StrippedRecord {
  step_id: number;
  blocks: { step_id: number; payload_sha256: string }[];
}

/** Why a turn was folded. */
export type FoldReason = 'size' | 'high_water' | 'budget';

/**
 * Every decision of a session, one JSON line each in `events.jsonl`. The history itself is in
 * the `append` events, so the file alone rebuilds the session. `recorded_at` is the only
 * wall-clock field and replay never compares it.
 */
export type SessionEvent =
  | { type: 'session_opened'; config: SessionConfig; recorded_at: string }
  | {
      type: 'append';
      from: number;
      messages: HistoryRecord[];
      /** Archived blocks removed from incoming messages (they are never stored or folded). */
      stripped: StrippedRecord[];
      recorded_at: string;
    }
  | { type: 'pin'; note_id: number; source: string | null; text: string; recorded_at: string }
  /**
   * The app's new text for a leading system message (the system prompt is its current
   * instructions, not a turn): history position `step_id` holds `content` from here on.
   */
  | { type: 'system_changed'; step_id: number; content: string; recorded_at: string }
  | {
      type: 'turn_started';
      turn: number;
      prompt_step: number | null;
      history_length: number;
      recorded_at: string;
    }
  | {
      type: 'fold';
      turn: number;
      step_id: number;
      steps: number[];
      reason: FoldReason;
      summary_source: 'default' | 'custom';
      /** The cold node's payload hash (the record itself stays short: no hash in the prompt). */
      payload_sha256: string;
      record: FoldedStep;
      recorded_at: string;
    }
  | {
      type: 'window';
      turn: number;
      layer: 'L2';
      /** New start of the L2 window, as an index into the fold order. */
      start: number;
      dropped_steps: number[];
      reason: string;
      recorded_at: string;
    }
  | {
      type: 'page_in';
      turn: number;
      step_id: number;
      payload_sha256: string;
      content_sha256: string;
      /** The hydration cap the scan gave this page (replay hydrates with it). */
      cap: number;
      /** A ranked page's window of lines; replay hydrates exactly this window. */
      window?: {
        start_line: number;
        end_line: number;
        lines?: number;
        tail_lines?: number;
        max_tokens: number;
      };
      chunk: number;
      chunks: number;
      truncated: boolean;
      tokens: number;
      matched_terms: string[];
      /** The guard's findings on the page, one line per pattern (absent when none). */
      findings?: FindingSummary[];
      recorded_at: string;
    }
  | {
      type: 'page_failed';
      turn: number;
      step_id: number;
      code: string;
      error: string;
      message: string;
      recorded_at: string;
    }
  | { type: 'compress'; turn: number; notes: CompressionNote[]; recorded_at: string }
  | { type: 'truncate'; turn: number; notes: TruncationNote[]; recorded_at: string }
  /** Live messages sent as head-and-tail excerpts in this turn's pack (the history keeps them whole). */
  | { type: 'live_excerpt'; turn: number; notes: LiveExcerptNote[]; recorded_at: string }
  | {
      type: 'pack_built';
      turn: number;
      step_id: number;
      tokens: number;
      baseline_tokens: number;
      budget: number;
      pack_sha256: string;
      over_budget: boolean;
      warnings: string[];
      recorded_at: string;
    }
  | { type: 'evict'; turn: number; step_id: number; recorded_at: string }
  | { type: 'turn_completed'; turn: number; history_length: number; recorded_at: string };

/** The type names of {@link SessionEvent}. */
export type SessionEventType = SessionEvent['type'];

/** An event before the log stamps it. */
export type PendingEvent = SessionEvent extends infer E
  ? E extends SessionEvent
    ? Omit<E, 'recorded_at'>
    : never
  : never;

/** Every event type, in the order a turn writes them (docs/harness.md lists each). */
export const EVENT_TYPES = [
  'session_opened',
  'append',
  'pin',
  'system_changed',
  'turn_started',
  'fold',
  'window',
  'page_in',
  'page_failed',
  'compress',
  'truncate',
  'live_excerpt',
  'pack_built',
  'evict',
  'turn_completed',
] as const;

const baseSchema = z.object({ type: z.enum(EVENT_TYPES), recorded_at: z.string() }).loose();

const systemChangedSchema = z
  .object({ step_id: z.number().int().nonnegative(), content: z.string() })
  .loose();

/** The record kind of the event log (a store's `events.jsonl`, or its rows in a database). */
export const EVENTS_KIND = 'events';
/** File name of the event log inside the store directory. */
export const EVENTS_FILE = `${EVENTS_KIND}.jsonl`;

/** Path of a store's event log. */
export function eventsPath(dir: string): string {
  return join(dir, EVENTS_FILE);
}

/**
 * The event without its wall-clock stamp, as canonical text: what replay compares.
 *
 * @example
 * comparableEvent(e) === comparableEvent(replayed);
 */
export function comparableEvent(e: SessionEvent | PendingEvent): string {
  const { recorded_at: _r, ...rest } = e as SessionEvent;
  return stableJson(rest);
}

/**
 * Reads and checks `events.jsonl`. A torn or invalid line is refused with its path and line
 * number (an interrupted write is never silently skipped or repaired).
 *
 * @example
 * const events = readEvents('/repo/.contextfold');
 */
export function readEvents(dir: string): SessionEvent[] {
  if (typeof dir !== 'string' || dir === '') {
    throw new UsageError(`readEvents needs the store directory (a path), got ${String(dir)}`);
  }
  return readEventsFile(eventsPath(dir)).events;
}

/**
 * The log file at `path` checked against its head (read first: an append in between leaves the
 * log longer than the head, never shorter); a missing log is an empty one.
 */
function readEventsFile(path: string): { events: SessionEvent[]; head: ChainHead; lines: number } {
  const anchor = { head: readHeadFile(path), headPath: headFilePath(path) };
  let text = '';
  try {
    text = readFileSync(path, 'utf8');
  } catch (e) {
    if ((e as NodeJS.ErrnoException).code !== 'ENOENT') throw notAFile(e, path);
  }
  const { events, head } = parseEventLog(text, path, { anchor });
  return { events, head, lines: events.length };
}

/**
 * A store's event log (any backend: a file, or rows of a database), checked as
 * {@link readEvents} checks the file.
 *
 * @example
 * const events = await loadEvents(engine);
 */
export async function loadEvents(engine: ContextFoldEngine): Promise<SessionEvent[]> {
  return (await loadEventLog(engine)).events;
}

/**
 * Where a log's hash chain stands: `last`, the SHA-256 of its last line (of the empty string
 * while it has none), the next line's `prev`; and whether its lines carry `prev` (`chained`).
 */
export interface ChainHead {
  last: string;
  chained: boolean;
}

/** The chain head of an empty log: a chained log's first line has this `prev`. */
const CHAIN_START: ChainHead = { last: sha256Hex(''), chained: false };

/** The event log as a writer last read or wrote it: its length, and its {@link ChainHead}. */
export interface EventLogMark extends RecordsMark, ChainHead {}

/** A `session_opened` whose config requires the log's head (`log_head`). */
function requiresHead(e: { type?: unknown; config?: { log_head?: unknown } }): boolean {
  return e.type === 'session_opened' && e.config?.log_head === 'sha256';
}

/** A `session_opened` whose config starts the hash chain (`log_chain`). */
function startsChain(e: { type?: unknown; config?: { log_chain?: unknown } }): boolean {
  return e.type === 'session_opened' && e.config?.log_chain === 'sha256';
}

/**
 * The log lines of `events` written after `head`: once the log is chained (or an event starts
 * the chain), each carries `prev`, the hash of the line before it. Returns the new head.
 */
function chainLines(
  events: readonly SessionEvent[],
  head: ChainHead,
): { text: string; head: ChainHead } {
  let { last, chained } = head;
  let text = '';
  for (const e of events) {
    chained ||= startsChain(e);
    const line = JSON.stringify(chained ? { ...e, prev: last } : e);
    text += `${line}\n`;
    last = sha256Hex(line);
  }
  return { text, head: { last, chained } };
}

/**
 * {@link loadEvents}, with the log's mark: hand it to {@link storeEvents} so a write lands only
 * on the log as it was read, chained from its last line; and its path (event `i` is its line
 * `i + 1`), for errors.
 *
 * @example
 * const { events, mark } = await loadEventLog(engine);
 */
export async function loadEventLog(
  engine: ContextFoldEngine,
): Promise<{ events: SessionEvent[]; mark: EventLogMark; path: string }> {
  const { path, text, head: anchor, headPath } = await engine.readRecords(EVENTS_KIND);
  const { events, head } = parseEventLog(text, path, { anchor: { head: anchor, headPath } });
  return { events, mark: { ...recordsMark(text), ...head }, path };
}

/**
 * Appends events to a store's log (any backend) in one durable write, chained from its last
 * line. With `after` (the mark of the log this writer last read or wrote), only if no one else
 * wrote since: a `StepConflictError` otherwise, nothing written; returns the new mark. Without
 * a mark from {@link loadEventLog} or an earlier call, the log is read first for its chain head.
 *
 * @example
 * await storeEvents(cf, events);
 * (await loadEvents(cf)).length; // grew by events.length
 */
export async function storeEvents(
  engine: ContextFoldEngine,
  events: readonly SessionEvent[],
  after?: RecordsMark | EventLogMark,
): Promise<EventLogMark | undefined> {
  if (events.length === 0) return after && 'last' in after ? after : undefined;
  let base: EventLogMark;
  if (after && 'last' in after) base = after;
  else {
    // `after`, when given, still guards the append below.
    base = (await loadEventLog(engine)).mark;
  }
  const { text, head } = chainLines(events, base);
  await engine.appendRecords(EVENTS_KIND, text, after ?? base);
  return { ...recordsMark(text, base), ...head };
}

/**
 * Parses and checks an event log's text; `path` names it in errors. Once a line carries `prev`
 * (or a `session_opened` with `log_chain` starts the chain), it and every later line must carry
 * the SHA-256 of the line before it, else an `IntegrityCheckError` names the line; `prev` is
 * left out of the events returned.
 *
 * @example
 * const events = parseEvents(await readFile(file, 'utf8'), file);
 * parseEvents('{"type":"append"', 'events.jsonl'); // throws IntegrityCheckError: line 1 is incomplete
 */
export function parseEvents(text: string, path: string): SessionEvent[] {
  return parseEventLog(text, path).events;
}

/** Where a log's text starts: after `line` lines whose chain ends at `head` (the start: 0 lines). */
export interface EventLogStart {
  head: ChainHead;
  line: number;
}

/** The head stored beside a log (null: there is none) and where it lives, for messages. */
export interface EventLogAnchor {
  head: RecordsHead | null;
  headPath: string;
}

/**
 * {@link parseEvents}, with the log's {@link ChainHead}. With `from`, `text` is what follows the
 * first `from.line` lines of the log (ending with a newline, chained to `from.head`): its lines
 * are checked and numbered as in the whole log, so reading a grown log's new lines this way
 * gives what parsing all of it would. With `anchor` (whole logs only), the log must extend that
 * head ({@link checkLogAnchor}). `headRequiredAt`: the first line recording `log_head`.
 */
export function parseEventLog(
  text: string,
  path: string,
  options: { from?: EventLogStart; anchor?: EventLogAnchor } = {},
): { events: SessionEvent[]; head: ChainHead; headRequiredAt: number | undefined } {
  const from = options.from ?? { head: CHAIN_START, line: 0 };
  const events: SessionEvent[] = [];
  if (text.length > 0 && !text.endsWith('\n')) {
    const line = text.split('\n').length + from.line;
    throw new IntegrityCheckError(
      `${path} line ${line} is incomplete (an interrupted write); the session log cannot be trusted past line ${line - 1}`,
      { path, line },
    );
  }
  const lines = text.split('\n');
  lines.pop();
  const head = { ...from.head };
  let headRequiredAt: number | undefined;
  lines.forEach((line, n) => {
    const i = n + from.line;
    let parsed: unknown;
    try {
      parsed = JSON.parse(line);
    } catch {
      throw new IntegrityCheckError(`${path} line ${i + 1} is not valid JSON`, {
        path,
        line: i + 1,
      });
    }
    const r = baseSchema.safeParse(parsed);
    if (!r.success) {
      throw new IntegrityCheckError(`${path} line ${i + 1} is not a session event`, {
        path,
        line: i + 1,
      });
    }
    const { prev, ...e } = parsed as SessionEvent & { prev?: unknown };
    if (head.chained || prev !== undefined || startsChain(e)) {
      if (prev !== head.last) {
        const before = i === 0 ? 'the start of the log' : `line ${i}`;
        throw new IntegrityCheckError(
          `${path} line ${i + 1}: prev does not match ${before} (the log was changed after it was written: a line edited, removed or moved)`,
          { path, line: i + 1 },
        );
      }
      head.chained = true;
      if (headRequiredAt === undefined && requiresHead(e)) headRequiredAt = i + 1;
    }
    head.last = sha256Hex(line);
    if (e.type === 'append') {
      e.messages.forEach((m, k) => {
        parseHistoryRecord(m, `${path} line ${i + 1} message ${k}`);
      });
    }
    if (e.type === 'system_changed' && !systemChangedSchema.safeParse(e).success) {
      throw new IntegrityCheckError(
        `${path} line ${i + 1} is not a valid system_changed event (it needs step_id, a history position, and content, a string)`,
        { path, line: i + 1 },
      );
    }
    events.push(e as SessionEvent);
  });
  if (options.anchor) checkLogAnchor(lines, headRequiredAt, path, options.anchor);
  return { events, head, headRequiredAt };
}

/**
 * Checks a whole log's `lines` against the head stored beside it: the log must extend the head
 * ({@link checkExtendsHead}), and a log with a line recording `log_head` (`headRequiredAt`)
 * must have one.
 */
export function checkLogAnchor(
  lines: readonly string[],
  headRequiredAt: number | undefined,
  path: string,
  anchor: EventLogAnchor,
): void {
  if (anchor.head) checkExtendsHead(lines, anchor.head, path, anchor.headPath);
  else if (headRequiredAt !== undefined) {
    throw new IntegrityCheckError(
      `${path} line ${headRequiredAt} records log_head, but the log's head (${anchor.headPath}) is missing: it was removed, or the log was copied without it; whether lines were cut off the end cannot be checked`,
      { path, line: headRequiredAt },
    );
  }
}

/**
 * A contextfold error met applying the event at `line` of the log at `path`, naming that line:
 * the same code, the message prefixed with the path and the line (`details.log`,
 * `details.line`). Errors that already name a line, and other errors, pass unchanged.
 *
 * @example
 * try { state.apply(e); } catch (err) { throw errorAtLine(err, path, i + 1); }
 */
export function errorAtLine(err: unknown, path: string, line: number): unknown {
  if (!isContextFoldError(err) || err.details.line !== undefined) return err;
  return new IntegrityCheckError(
    `${path} line ${line}: ${err.message}`,
    { ...err.details, log: path, line },
    err.code,
  );
}

/** The lock file that serialises appends to a session's `events.jsonl` across processes. */
export function eventsLockPath(dir: string): string {
  return join(dir, `${EVENTS_FILE}.lock`);
}

/**
 * Appends events to the log in one durable write (one fsync per hook, not per event), holding
 * the session's inter-process events lock so that two processes on one session directory never
 * interleave their lines; chained from the log's last line, and the log's head rewritten after
 * it. When the head is current (written for the log's size, hashing its last line) that line and
 * the head are all it reads; otherwise the whole log is read and checked against its head first
 * (a log cut short or whose last line changed is refused, nothing written).
 *
 * @example
 * await appendEvents('/repo/.contextfold', [event]);
 */
export async function appendEvents(
  dir: string,
  events: readonly SessionEvent[],
  options: { lockTimeoutMs?: number } = {},
): Promise<void> {
  if (events.length === 0) return;
  const path = eventsPath(dir);
  await withWriteLock(dir, eventsLockPath(dir), options.lockTimeoutMs ?? 10_000, () => {
    const bytes = fileSize(path);
    let at = currentTail(path, bytes);
    if (!at) {
      // No head written for this size (a log from before the head, a crash after an append):
      // the whole log is read and checked once.
      const log = readEventsFile(path);
      at = { lines: log.lines, chain: log.head };
    }
    appendWithHead(path, chainLines(events, at.chain).text, at.lines, bytes);
  });
}

/**
 * Where the log file ends, from its head and last line alone: when the head was written for the
 * log's size and hashes its last line (null otherwise, and for an empty log with a head).
 */
function currentTail(path: string, bytes: number): { lines: number; chain: ChainHead } | null {
  const head = readHeadFile(path) as (RecordsHead & { bytes?: number }) | null;
  if (!head) return bytes === 0 ? { lines: 0, chain: CHAIN_START } : null;
  const last = lastLine(path);
  if (head.bytes !== bytes || last === null || sha256Hex(last) !== head.last_sha256) return null;
  return { lines: head.lines, chain: chainHead(last) };
}

/** The chain head after a log's last line (`null`: an empty log). */
function chainHead(line: string | null): ChainHead {
  if (line === null) return CHAIN_START;
  let e: { prev?: unknown; type?: unknown; config?: { log_chain?: unknown } } = {};
  try {
    e = JSON.parse(line);
  } catch {
    // A torn line: the next read refuses the log with its line number.
  }
  return { last: sha256Hex(line), chained: e.prev !== undefined || startsChain(e) };
}
