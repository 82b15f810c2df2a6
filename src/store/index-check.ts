// The deep part of a LocalStore's index check: every entry the index holds compared with what
// the durable files (snapshot and journal) say it must be, without loading them whole.
import { existsSync } from 'node:fs';
import { readFile } from 'node:fs/promises';
import { setImmediate as turn } from 'node:timers/promises';
import { canonicalJson } from '../protocol/canonical-json.js';
import type { IndexEntry } from '../protocol/types.js';
import { parseEntry } from './index-entry.js';
import type { IndexGeneration } from './index-generation.js';
import { parseJournal } from './journal.js';
import type { StoreLayout } from './layout.js';
import { readSnapshot } from './snapshot-reader.js';

/**
 * Compares every entry of the index with recall_index.json + the journal up to the offset the
 * index has applied (records appended since are not the index's yet, and not a difference).
 */
export async function compareEntries(
  gen: IndexGeneration,
  layout: StoreLayout,
): Promise<string | null> {
  const db = gen.db!;
  const L = layout;
  if (gen.state.problem) return null;
  // The journal's records (bounded by compaction to about the snapshot's size).
  // Step → its entry as of the journal's end (null: dropped).
  const journalFolds = new Map<number, IndexEntry | null>();
  const journalEvicted = new Set<number>();
  if (existsSync(L.journalPath) && !gen.state.journalStale) {
    // Only the records the index reflects: another process may append while this compares.
    const text = (await readFile(L.journalPath))
      .subarray(0, gen.state.journal === null ? 0 : gen.state.journalOffset)
      .toString('utf8');
    // In slices of whole lines, a turn of the event loop between them.
    for (let at = 0; at < text.length; ) {
      const end = text.indexOf('\n', Math.min(text.length - 1, at + (1 << 20)));
      const slice = text.slice(at, end < 0 ? text.length : end + 1);
      at += slice.length;
      for (const r of parseJournal(slice).records) {
        if (r.op === 'fold') journalFolds.set(r.entry.step_id, r.entry);
        else if (r.op === 'evict') journalEvicted.add(r.step_id);
        else if (r.op === 'drop') {
          journalFolds.set(r.step_id, null);
          journalEvicted.delete(r.step_id);
        }
      }
      await turn();
    }
  }
  const expect = (raw: unknown): { step: number; json: string } | string => {
    const p = parseEntry(raw);
    if (!p.ok) return `an entry ${p.reason}`;
    const e = journalEvicted.has(p.entry.step_id) ? { ...p.entry, evicted: true } : p.entry;
    return { step: e.step_id, json: canonicalJson(e) };
  };
  let seen = 0;
  let problem: string | null = null;
  const check = (raw: unknown) => {
    if (problem) return;
    const x = expect(raw);
    if (typeof x === 'string') {
      problem = x;
      return;
    }
    seen++;
    if (db.entryJson(x.step) !== x.json) problem = `step ${x.step} differs from the durable index`;
  };
  if (existsSync(L.indexPath)) {
    const r = await readSnapshot(L.indexPath, (members) => {
      for (const m of members) {
        if (m.kind !== 'node') continue;
        const step = Number(m.key);
        const j = journalFolds.get(step);
        journalFolds.delete(step);
        // Dropped by the journal (skipped), folded again after a drop, or as in the snapshot.
        if (j !== null) check(j ?? m.value);
      }
    });
    if (!r.ok) return `recall_index.json does not parse (${r.reason})`;
  }
  for (const e of journalFolds.values()) if (e !== null) check(e);
  if (problem) return problem;
  const count = gen.state.entries;
  if (seen !== count) return `the index holds ${count} entries, the durable state ${seen}`;
  return null;
}
