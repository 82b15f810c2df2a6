import { closeSync, existsSync, fstatSync, openSync, readFileSync, readSync } from 'node:fs';
import { dirname } from 'node:path';
import type { ContextFoldEngine } from '../../engine/types.js';
import { writeFileAtomic } from '../../fs/durable-fs.js';
import { TranscriptReader, type TranscriptState } from '../../import/claude-code-transcript.js';
import type { OpenTurn, OpenTurnSegment } from '../../import/conversation-builder.js';
import { redactedFoldInputs, storableTurns } from '../../import/import-turns.js';
import type { ImportedTurn } from '../../import/turn.js';
import { UsageError } from '../../protocol/errors.js';
import { IntegrityCheckError } from '../../protocol/ipcf-errors.js';
import { makeStoreDir } from '../../store/layout.js';

/** Version of the ingestion state file. */
export const INGEST_STATE_VERSION = 1;

/** What the hook remembers about a transcript between runs (`<session>.state.json`). */
export interface IngestState {
  version: number;
  transcript_path: string;
  /** Bytes of the transcript already read (always at a line boundary). */
  offset: number;
  /** Lines already read, for error messages. */
  lines: number;
  reader: TranscriptState;
}

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
}

function loadState(path: string, transcriptPath: string): IngestState {
  if (!existsSync(path)) {
    return {
      version: INGEST_STATE_VERSION,
      transcript_path: transcriptPath,
      offset: 0,
      lines: 0,
      reader: emptyReader(),
    };
  }
  let s: IngestState;
  try {
    s = JSON.parse(readFileSync(path, 'utf8')) as IngestState;
  } catch {
    throw new IntegrityCheckError(
      `hook state file is not valid JSON: ${path}; move it away to re-read the transcript`,
      {
        path,
      },
    );
  }
  if (
    s.version !== INGEST_STATE_VERSION ||
    typeof s.offset !== 'number' ||
    typeof s.reader !== 'object'
  ) {
    throw new IntegrityCheckError(
      `hook state file has an unknown layout: ${path}; move it away to re-read the transcript`,
      {
        path,
      },
    );
  }
  if (s.transcript_path !== transcriptPath) {
    // A new transcript file for the same session (resume): read it from the start; rows already
    // read are recognised by uuid, so step ids continue where they were.
    return { ...s, transcript_path: transcriptPath, offset: 0, lines: 0 };
  }
  return s;
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
 * Reads the complete lines after `offset` (a line still being written is left for next time),
 * about `maxBytes` of them: a long backlog is read over several runs, never all at once (a
 * transcript of hundreds of MB would not fit in one string). `rest`: bytes were left unread.
 */
function readNewLines(
  path: string,
  offset: number,
  maxBytes: number,
): { text: string; start: number; rest: boolean } {
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
    // A transcript shorter than what was read, or whose byte before the offset no longer ends a
    // line, was rewritten: read it again from the start (rows already read are known by uuid).
    const start = size < offset || !endsLineAt(fd, offset) ? 0 : offset;
    if (size - start <= 0) return { text: '', start, rest: false };
    let buf = readAt(fd, start, Math.min(size - start, maxBytes));
    let end = buf.lastIndexOf(0x0a);
    // One line longer than the limit: read on until it ends.
    while (end < 0 && start + buf.length < size) {
      buf = readAt(fd, start, Math.min(size - start, buf.length * 2));
      end = buf.lastIndexOf(0x0a);
    }
    // Stopped before the end of the file (not just before a line still being written).
    const rest = start + buf.length < size;
    if (end < 0) return { text: '', start, rest };
    try {
      return {
        text: new TextDecoder('utf-8', { fatal: true }).decode(buf.subarray(0, end + 1)),
        start,
        rest,
      };
    } catch {
      throw new UsageError(`${path}: the transcript is not valid UTF-8 after byte ${start}`, {
        path,
      });
    }
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
 * Reads what was appended to a Claude Code transcript since the last run and folds the turns
 * that became final. Only the new bytes are parsed (the state file remembers the offset and the
 * reader's open turns), so a run costs the same on turn 20 and turn 2,000. State is saved after
 * the fold succeeded; a run that dies in between repeats an idempotent fold next time.
 *
 * @example
 * await ingestTranscript(engine, { transcriptPath, statePath, mode: 'prompt' });
 */
export async function ingestTranscript(
  engine: ContextFoldEngine,
  options: IngestOptions,
): Promise<IngestResult> {
  const state = loadState(options.statePath, options.transcriptPath);
  const reader = new TranscriptReader(state.reader);
  if (!existsSync(options.transcriptPath)) {
    return {
      folded: 0,
      turns: reader.nextStep,
      compactions: [...reader.compactionSteps],
      more: false,
      sessionId: reader.session,
      transcript: 'missing',
      previouslyRead: state.offset > 0,
    };
  }
  const { text, start, rest } = readNewLines(
    options.transcriptPath,
    state.offset,
    options.maxReadBytes ?? DEFAULT_MAX_READ_BYTES,
  );
  if (start !== state.offset) state.lines = 0;
  const limit = options.maxTurns ?? Number.POSITIVE_INFINITY;
  const turns: ImportedTurn[] = [];
  let lineNo = state.lines;
  let more = rest;
  let pos = 0;
  while (pos < text.length) {
    const nl = text.indexOf('\n', pos);
    const line = text.slice(pos, nl);
    lineNo++;
    turns.push(...reader.pushLine(line, lineNo, options.transcriptPath));
    pos = nl + 1;
    if (turns.length >= limit && pos < text.length) {
      more = true;
      break;
    }
  }
  const consumed =
    pos === text.length
      ? Buffer.byteLength(text, 'utf8')
      : Buffer.byteLength(text.slice(0, pos), 'utf8');
  if (options.mode === 'compact' && !more) turns.push(...reader.flush('complete'));
  turns.sort((a, b) => a.step_id - b.step_id);
  // A lone surrogate (a tool output Claude Code cut mid-emoji) would fail every later prompt.
  if (turns.length > 0) {
    await engine.foldMany(await redactedFoldInputs(engine, storableTurns(turns).turns));
  }
  const offset = start + consumed;
  // Nothing read and nothing folded: the state file already holds this state (redacted), and
  // redacting it again would load the secret scanner on a prompt that changed nothing.
  if (offset !== state.offset || turns.length > 0 || !existsSync(options.statePath)) {
    const next: IngestState = {
      version: INGEST_STATE_VERSION,
      transcript_path: options.transcriptPath,
      offset,
      lines: lineNo,
      reader: await storableState(reader.state(), engine),
    };
    makeStoreDir(dirname(options.statePath));
    writeFileAtomic(options.statePath, JSON.stringify(next));
  }
  return {
    folded: turns.length,
    turns: reader.nextStep,
    compactions: [...reader.compactionSteps],
    more,
    sessionId: reader.session,
    transcript: 'read',
    previouslyRead: state.offset > 0,
  };
}
