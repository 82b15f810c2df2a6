// Removing one indexed entry (a journaled `drop`, a repair): rare, and the one place postings are
// taken out of blocks and frequencies lowered instead of only added, so it stays apart from the
// batch writer.
import type { IndexEntry } from '../protocol/types.js';
import { POST_ONE, referenceTerms } from './index-fold-writer.js';
import { decodeBlock } from './index-scan-reader.js';
import { FIELD_RANKED, FIELD_REFERENCE } from './index-schema.js';
import type { IndexState } from './index-state.js';
import type { IndexStatements } from './index-statements.js';
import { encodePostings } from './posting-block.js';

/** Takes `step` out of the term's block that holds it; false when no block does. */
function unpostStep(s: IndexStatements, path: string, term: number, step: number): boolean {
  const rows = s
    .get(
      'blocksAt',
      'SELECT last, n, data FROM postings WHERE term = ? AND last >= ? AND first <= ?',
    )
    .raw()
    .all(term, step, step) as [number, number, Uint8Array][];
  for (const [last, n, data] of rows) {
    const b = decodeBlock(path, data, n);
    const i = b.steps.indexOf(step);
    if (i < 0) continue;
    s.get('blockDel', 'DELETE FROM postings WHERE term = ? AND last = ?').run(term, last);
    b.steps.splice(i, 1);
    b.tfs.splice(i, 1);
    if (b.steps.length > 0) {
      const e = encodePostings(b.steps, b.tfs);
      s.get('post', POST_ONE).run(term, e.last, e.first, b.steps.length, e.data);
    }
    return true;
  }
  return false;
}

/**
 * Removes the indexed `entry` of `step` entirely (`IndexDb.drop` reads it first): its row, its
 * reference and ranked postings (frequencies follow; a term left without postings is removed),
 * its ranked document and its eviction log rows. `rankedTerms` are the terms of its analysis
 * when it has one.
 */
export function dropEntry(
  s: IndexStatements,
  path: string,
  step: number,
  entry: IndexEntry,
  rankedTerms: readonly string[] | undefined,
  state: IndexState,
): void {
  const unpost = (field: number, term: string) => {
    const row = s
      .get('termGet', 'SELECT id, df FROM terms WHERE field = ? AND term = ?')
      .raw()
      .get(field, term) as [number, number] | undefined;
    if (!row) return;
    if (!unpostStep(s, path, row[0], step)) return;
    if (row[1] <= 1) {
      s.get('termDel', 'DELETE FROM terms WHERE field = ? AND term = ?').run(field, term);
    } else {
      s.get('termDf', 'UPDATE terms SET df = ? WHERE field = ? AND term = ?').run(
        row[1] - 1,
        field,
        term,
      );
    }
  };
  for (const t of referenceTerms(entry)) unpost(FIELD_REFERENCE, t);
  const doc = s
    .get('docGet', 'SELECT length, parts, part_length FROM docs WHERE step = ?')
    .raw()
    .get(step) as [number, number, number] | undefined;
  if (doc) {
    if (rankedTerms) for (const t of rankedTerms) unpost(FIELD_RANKED, t);
    else {
      // The analysis is not at hand: find the document's ranked postings the slow way (every
      // block whose range holds the step; a repair, never a fold or a scan).
      const rows = s
        .get(
          'stepTerms',
          `SELECT t.term, p.n, p.data FROM postings p JOIN terms t ON t.id = p.term WHERE p.first <= ? AND p.last >= ? AND t.field = ${FIELD_RANKED}`,
        )
        .raw()
        .all(step, step) as [string, number, Uint8Array][];
      const ids = rows.filter(([, n, data]) => decodeBlock(path, data, n).steps.includes(step));
      for (const [t] of ids) unpost(FIELD_RANKED, t);
    }
    s.get('docDel', 'DELETE FROM docs WHERE step = ?').run(step);
    state.rankedDocs--;
    state.rankedLength -= doc[0];
    state.rankedParts -= doc[1];
    state.rankedPartLength -= doc[2];
  }
  s.get('entryDel', 'DELETE FROM entries WHERE step = ?').run(step);
  s.get('evictDel', 'DELETE FROM evictions WHERE step = ?').run(step);
  state.entries--;
  if (entry.evicted) state.evicted--;
  state.tokenEstimate -= entry.token_estimate;
  // Other processes' caches cannot follow a removal: they start over.
  state.epoch++;
}
