import { canonicalJson, sha256Hex } from '../protocol/canonical-json.js';
import type { IndexEntry } from '../protocol/types.js';

/**
 * The recall-index journal (`recall_index.journal`): one checksummed JSON record per line,
 * appended and fsynced by each fold or evict so a fold costs O(1) instead of rewriting the
 * whole index. Readers treat `recall_index.json` + journal as the index. The first record names
 * the snapshot it extends; compaction folds the journal into the snapshot and removes it.
 */
export type JournalRecord =
  | { op: 'base'; snapshot_sha256: string | null; created_at: string }
  | { op: 'fold'; entry: IndexEntry }
  | { op: 'evict'; step_id: number; evicted_at: string }
  /** `contextfold repair` removed an entry whose node is gone or untrustworthy. */
  | { op: 'drop'; step_id: number; dropped_at: string; reason: string };

/**
 * One line of the journal for a record: `{"record":…,"sha256":…}\n`. `json` is the record's
 * canonical JSON when the caller has it already (see {@link foldRecordJson}).
 */
export function journalLine(record: JournalRecord, json: string = canonicalJson(record)): string {
  // Canonical JSON of {record, sha256} without serialising the record twice ("record" < "sha256").
  return `{"record":${json},"sha256":"${sha256Hex(json)}"}\n`;
}

/**
 * The canonical JSON of a fold record, from its entry's canonical JSON: the index keeps that
 * JSON too, so a fold serialises its entry once ("entry" sorts before "op").
 *
 * @example
 * foldRecordJson(canonicalJson(entry)) === canonicalJson({ op: 'fold', entry }); // true
 */
export function foldRecordJson(entryJson: string): string {
  return `{"entry":${entryJson},"op":"fold"}`;
}

/** Outcome of parsing journal bytes. */
export interface ParsedJournal {
  records: JournalRecord[];
  /** Bytes consumed (complete, valid lines). */
  consumed: number;
  /** A final line without its newline: a torn append (or one still being written). */
  tornTail: boolean;
  /** First invalid complete line, if any: 1-based line number and why. */
  invalid?: { line: number; reason: string };
}

/**
 * Parses journal text starting at line number `firstLine` (for messages). Stops at the first
 * invalid line; never skips one.
 */
export function parseJournal(text: string, firstLine = 1): ParsedJournal {
  const records: JournalRecord[] = [];
  let pos = 0;
  let line = firstLine;
  while (pos < text.length) {
    const nl = text.indexOf('\n', pos);
    if (nl === -1)
      return { records, consumed: Buffer.byteLength(text.slice(0, pos)), tornTail: true };
    const raw = text.slice(pos, nl);
    // Lines are written canonically ({"record":R,"sha256":H}), so the checksum is verified over
    // the raw bytes of R: no re-serialisation (journal replay stays cheap on open).
    const PREFIX = '{"record":';
    const SUFFIX_LEN = 77; // ,"sha256":"<64 hex>"}
    const fail = (reason: string): ParsedJournal => ({
      records,
      consumed: Buffer.byteLength(text.slice(0, pos)),
      tornTail: false,
      invalid: { line, reason },
    });
    if (!raw.startsWith(PREFIX) || raw.length < PREFIX.length + SUFFIX_LEN)
      return fail('not a journal record');
    const tail = raw.slice(raw.length - SUFFIX_LEN);
    const body = raw.slice(PREFIX.length, raw.length - SUFFIX_LEN);
    const m = /^,"sha256":"([0-9a-f]{64})"\}$/.exec(tail);
    if (!m) return fail('not a journal record');
    if (sha256Hex(body) !== m[1]) return fail('checksum mismatch');
    let rec: JournalRecord;
    try {
      rec = JSON.parse(body) as JournalRecord;
    } catch {
      return fail('not valid JSON');
    }
    if (typeof rec !== 'object' || rec === null) return fail('not a journal record');
    if (rec.op !== 'base' && rec.op !== 'fold' && rec.op !== 'evict' && rec.op !== 'drop') {
      return {
        records,
        consumed: Buffer.byteLength(text.slice(0, pos)),
        tornTail: false,
        invalid: { line, reason: `unknown op ${JSON.stringify((rec as { op: unknown }).op)}` },
      };
    }
    records.push(rec);
    pos = nl + 1;
    line++;
  }
  return { records, consumed: Buffer.byteLength(text.slice(0, pos)), tornTail: false };
}
