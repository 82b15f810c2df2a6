import { describe, expect, it } from 'vitest';
import { canonicalJson } from '../protocol/canonical-json.js';
import type { IndexEntry } from '../protocol/types.js';
import { foldRecordJson, journalLine, parseJournal } from './journal.js';

const entry = {
  step_id: 7,
  summary: 'tool: psql — “port” ✓ \u0001',
  identifiers: ['5433', 'port'],
  files: ['src/é.ts'],
  errors: [],
  payload_sha256: 'a'.repeat(64),
} as unknown as IndexEntry;

describe('journal lines', () => {
  it("a fold record's JSON built from its entry's JSON is the record's canonical JSON", () => {
    expect(foldRecordJson(canonicalJson(entry))).toBe(canonicalJson({ op: 'fold', entry }));
  });

  it('a line from given JSON is the line journalLine computes itself, and parses back', () => {
    const record = { op: 'fold' as const, entry };
    const line = journalLine(record, foldRecordJson(canonicalJson(entry)));
    expect(line).toBe(journalLine(record));
    expect(parseJournal(line, 1).records).toEqual([record]);
  });
});
