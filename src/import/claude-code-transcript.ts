import { anthropicParts, type Fail } from './anthropic-blocks.js';
import {
  ConversationBuilder,
  type ConversationState,
  type MessagePart,
} from './conversation-builder.js';
import { isRecord, parseJsonLine, sourceError } from './source-error.js';
import type { ImportedTurn } from './turn.js';

/** Serialisable progress of a {@link TranscriptReader}, so ingestion can resume across processes. */
export interface TranscriptState {
  builder: ConversationState;
  /** `uuid`s of conversation rows already read (a row seen twice is read once). */
  seen_uuids: string[];
  /** `main`: sub-agent (`isSidechain`) rows are skipped; `sidechain`: a sub-agent's own transcript. */
  mode: 'main' | 'sidechain' | null;
  /** Step ids where a post-compaction conversation starts (the compaction summary's turn). */
  compactions: number[];
  /** The transcript's `sessionId`, from its first row that has one. */
  session_id: string | null;
  /**
   * The latest `timestamp` (ms since the epoch) of the conversation rows read; absent before
   * one with a timestamp was read.
   */
  latest_time?: number;
}

/** The label a compaction summary turn starts with (as in the shared trajectories). */
export const COMPACT_SUMMARY_LABEL = '[compact summary]\n';

/**
 * Reads a Claude Code session transcript (`~/.claude/projects/<project>/<session>.jsonl`) row by
 * row. Conversation rows are `type: "user" | "assistant"` with an Anthropic `message`; rows of
 * other types (`progress`, `system`, `file-history-snapshot`, ...) and `isMeta` rows are not turns.
 * Rows repeating a `uuid` are read once. Assistant rows sharing a `message.id` are one turn, and
 * tool results are attached to the turn holding their `tool_use`. Turns are numbered by position
 * in file order, which only grows as Claude Code appends.
 *
 * @example
 * const r = new TranscriptReader();
 * const turns = [...r.pushLine(line, 1, 'session.jsonl'), ...r.flush()];
 */
export class TranscriptReader {
  private readonly builder: ConversationBuilder;
  private readonly seen: Set<string>;
  private mode: TranscriptState['mode'];
  private readonly compactions: number[];
  private sessionId: string | null;
  private latest: number | undefined;
  private readonly olderSeen: ((uuid: string) => boolean) | undefined;

  /**
   * `olderSeen`: asked about a row whose uuid is not in the state's `seen_uuids` and whose
   * `timestamp` is earlier than the latest read or missing, i.e. one that may be written again
   * (Claude Code re-appends earlier history, with the same uuids and timestamps, on a later
   * compaction); a row it knows is read once. A row written for the first time is almost always newer, so it
   * is seldom asked (and, not known, read).
   */
  constructor(state?: TranscriptState, olderSeen?: (uuid: string) => boolean) {
    this.builder = new ConversationBuilder(state?.builder);
    this.seen = new Set(state?.seen_uuids ?? []);
    this.mode = state?.mode ?? null;
    this.compactions = [...(state?.compactions ?? [])];
    this.sessionId = state?.session_id ?? null;
    this.latest = state?.latest_time;
    this.olderSeen = olderSeen;
  }

  /** The number of turns so far (the next step id). */
  get nextStep(): number {
    return this.builder.nextStep;
  }

  /** The transcript's session id, once a row carrying it was read. */
  get session(): string | null {
    return this.sessionId;
  }

  /** Step ids where post-compaction conversations start, ascending. */
  get compactionSteps(): readonly number[] {
    return this.compactions;
  }

  /** The state to persist (uuids in first-seen order, which is file order). */
  state(): TranscriptState {
    return {
      builder: this.builder.state(),
      seen_uuids: [...this.seen],
      mode: this.mode,
      compactions: [...this.compactions],
      session_id: this.sessionId,
      ...(this.latest !== undefined ? { latest_time: this.latest } : {}),
    };
  }

  /** Reads one line; returns the turns that became final. */
  pushLine(line: string, lineNo: number, source: string): ImportedTurn[] {
    if (line.trim() === '') return [];
    const row = parseJsonLine(
      line,
      source,
      lineNo,
      'a Claude Code transcript has one JSON object per line',
    );
    const fail: Fail = (problem) => {
      throw sourceError(source, lineNo, problem);
    };
    if (!isRecord(row)) fail('expected a JSON object (a transcript row)');
    const r = row as Record<string, unknown>;
    if (typeof r.type !== 'string')
      fail('transcript row has no "type"; is this a Claude Code transcript?');
    if (this.sessionId === null && typeof r.sessionId === 'string') this.sessionId = r.sessionId;
    if (r.type === 'system' && r.subtype === 'compact_boundary') {
      this.markCompaction();
      return [];
    }
    if (r.type !== 'user' && r.type !== 'assistant') return [];
    if (typeof r.uuid === 'string') {
      if (this.seen.has(r.uuid) || this.readBefore(r.uuid, r.timestamp)) return [];
      this.seen.add(r.uuid);
    }
    this.mode ??= r.isSidechain === true ? 'sidechain' : 'main';
    if (this.mode === 'main' && r.isSidechain === true) return [];
    // A compaction summary is kept even when flagged meta (some Claude Code versions do).
    if (r.isMeta === true && r.isCompactSummary !== true) return [];
    if (!isRecord(r.message)) fail(`"${r.type}" row has no "message" object`);
    const message = r.message as Record<string, unknown>;
    let parts: MessagePart[] = anthropicParts(message.content, (p) => fail(`message ${p}`));
    if (r.type === 'user') {
      if (r.isCompactSummary === true) {
        this.markCompaction();
        parts = parts.map((p) =>
          p.kind === 'text' ? { ...p, text: COMPACT_SUMMARY_LABEL + p.text } : p,
        );
      }
      return this.builder.push({ role: 'user', parts });
    }
    return this.builder.push({
      role: 'assistant',
      parts,
      ...(typeof message.id === 'string' ? { groupKey: message.id } : {}),
    });
  }

  /** Ends the input; see {@link ConversationBuilder.flush}. */
  flush(mode: 'all' | 'complete' = 'all'): ImportedTurn[] {
    return this.builder.flush(mode);
  }

  /** Step ids of the turns not emitted yet (see `ConversationBuilder.pending`). */
  pending(): number[] {
    return this.builder.pending();
  }

  /**
   * Whether a row not in `seen` is one read before (see the constructor); tracks the latest time.
   * A row with no usable `timestamp` cannot be placed in time, so it is asked about too: a
   * repeat of an old one would otherwise be read (and folded) again.
   */
  private readBefore(uuid: string, timestamp: unknown): boolean {
    const time = typeof timestamp === 'string' ? Date.parse(timestamp) : Number.NaN;
    if (Number.isNaN(time)) return this.olderSeen?.(uuid) ?? false;
    if (this.latest !== undefined && time < this.latest) return this.olderSeen?.(uuid) ?? false;
    this.latest = time;
    return false;
  }

  private markCompaction(): void {
    if (this.compactions.at(-1) !== this.builder.nextStep)
      this.compactions.push(this.builder.nextStep);
  }
}

/** Result of {@link parseClaudeCodeTranscript}. */
export interface ParsedTranscript {
  turns: ImportedTurn[];
  sessionId: string | null;
  compactions: number[];
  /**
   * Steps of the last turns still open (a tool call without its result: the session is
   * running): not in `turns`, so a later import of the grown file adds them whole instead of
   * conflicting with a partial copy.
   */
  open: number[];
}

/**
 * Parses a whole Claude Code transcript (text of the `.jsonl`, already decompressed).
 *
 * @example
 * const { turns, sessionId } = parseClaudeCodeTranscript(text, 'session.jsonl');
 */
export function parseClaudeCodeTranscript(text: string, source: string): ParsedTranscript {
  const reader = new TranscriptReader();
  const turns: ImportedTurn[] = [];
  const lines = text.split('\n');
  for (const [i, line] of lines.entries()) turns.push(...reader.pushLine(line, i + 1, source));
  turns.push(...reader.flush('complete'));
  turns.sort((a, b) => a.step_id - b.step_id);
  return {
    turns,
    sessionId: reader.session,
    compactions: [...reader.compactionSteps],
    open: reader.pending(),
  };
}
