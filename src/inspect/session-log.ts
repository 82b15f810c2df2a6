import { createHash } from 'node:crypto';
import { existsSync, readFileSync } from 'node:fs';
import {
  checkLogAnchor,
  type EventLogStart,
  eventsPath,
  parseEventLog,
  type SessionEvent,
} from '../harness/session-events.js';
import { headFilePath, readHeadFile } from '../store/records-head.js';

/** A store's session log as last read: its events, and what identifies the bytes they came from. */
export interface ReadLog {
  events: readonly SessionEvent[];
  path: string;
  /**
   * Changes whenever the log does other than grow by whole lines (a line edited, removed or
   * moved, the file replaced): earlier events, and what was derived from them, are stale.
   */
  generation: number;
}

interface Parsed {
  bytes: number;
  sha256: string;
  events: SessionEvent[];
  end: EventLogStart;
  /** The first line recording `log_head` (the log must then have its head). */
  headRequiredAt: number | undefined;
  generation: number;
}

const sha256 = (b: Uint8Array): string => createHash('sha256').update(b).digest('hex');

/**
 * The session log of a store directory, read on every call and checked by content (not by
 * size or mtime: an edit that keeps both is seen). Unchanged bytes give the same events (the
 * same objects); a log that grew by whole lines parses only its new lines and keeps the
 * earlier events, which is what lets replay checkpoints taken on them go on being used. Any
 * other change parses it all again, under a new generation. Errors are `readEvents`'s, with
 * the same path and line numbers.
 */
export class SessionLogReader {
  private last: Parsed | null = null;
  private generations = 0;

  constructor(private readonly dir: string) {}

  /** The log's events now; null when the store has no `events.jsonl`. */
  read(): ReadLog | null {
    const path = eventsPath(this.dir);
    // The head first: an append in between leaves the log longer than it, never shorter.
    const anchor = { head: readHeadFile(path), headPath: headFilePath(path) };
    if (!existsSync(path)) {
      // A log deleted beside its head is cut short, not absent.
      checkLogAnchor([], undefined, path, anchor);
      return null;
    }
    const bytes = readFileSync(path);
    const last = this.last;
    let parsed: Parsed;
    if (
      last &&
      bytes.length >= last.bytes &&
      sha256(bytes.subarray(0, last.bytes)) === last.sha256
    ) {
      if (bytes.length === last.bytes) {
        checkHead(bytes, last.headRequiredAt, path, anchor);
        return { events: last.events, path, generation: last.generation };
      }
      // The old bytes end with a newline (they parsed), so the new lines decode on their own.
      const tail = parseEventLog(bytes.subarray(last.bytes).toString('utf8'), path, {
        from: last.end,
      });
      parsed = {
        bytes: bytes.length,
        sha256: sha256(bytes),
        events: last.events.concat(tail.events),
        end: { head: tail.head, line: last.end.line + tail.events.length },
        headRequiredAt: last.headRequiredAt ?? tail.headRequiredAt,
        generation: last.generation,
      };
    } else {
      const all = parseEventLog(bytes.toString('utf8'), path);
      parsed = {
        bytes: bytes.length,
        sha256: sha256(bytes),
        events: all.events,
        end: { head: all.head, line: all.events.length },
        headRequiredAt: all.headRequiredAt,
        generation: ++this.generations,
      };
    }
    checkHead(bytes, parsed.headRequiredAt, path, anchor);
    this.last = parsed;
    return { events: parsed.events, path, generation: parsed.generation };
  }
}

/** The whole log checked against its head (the head may change while the log does not). */
function checkHead(
  bytes: Buffer,
  headRequiredAt: number | undefined,
  path: string,
  anchor: Parameters<typeof checkLogAnchor>[3],
): void {
  const lines = bytes.toString('utf8').split('\n');
  lines.pop();
  checkLogAnchor(lines, headRequiredAt, path, anchor);
}
