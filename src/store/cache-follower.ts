// Keeps a process's read cache in step with the index's change feed: what another process (or
// this one) committed since the last look updates the cached lists it touches, and a read is
// cached only when it cannot have seen a change the cache has not.
import type { IndexEntry } from '../protocol/types.js';
import { FIELD_RANKED, FIELD_REFERENCE, type IndexDb, referenceTerms } from './index-db.js';
import type { AnalysisKeyOf } from './index-loader.js';
import type { ReadCache } from './read-cache.js';

/**
 * Brings the read cache in step with the index: every fold, eviction and analysis since the
 * last look (this process's or another's) updates the cached lists it touches.
 */
export function followChanges(
  db: IndexDb,
  cache: ReadCache,
  generation: string,
  keyOf: AnalysisKeyOf | undefined,
): void {
  const seq = db.changeSeq();
  if (cache.generation !== generation || seq < cache.seq) {
    cache.reset(generation, seq);
    return;
  }
  if (seq === cache.seq) return;
  // Any change may add or remove the last analysed document.
  cache.lastDocStep = undefined;
  const changes = db.changesSince(cache.seq, 10_001);
  if (changes.length > 10_000) {
    cache.reset(generation, seq);
    return;
  }
  for (const c of changes) {
    cache.forgetEntry(c.step);
    if (!cache.holdsTerms) continue;
    if (c.op === 1) {
      const json = db.entryJson(c.step);
      if (json === undefined) continue;
      const terms = referenceTerms(JSON.parse(json) as IndexEntry);
      cache.addPostings(
        FIELD_REFERENCE,
        c.step,
        terms,
        terms.map(() => 1),
      );
    }
    if (c.op === 1 || c.op === 3) followAnalysis(db, cache, keyOf, c.step);
  }
  cache.seq = changes[changes.length - 1]!.seq;
}

/**
 * Caches what was just read only if no change happened since the cache's position in the
 * feed (another process may have committed meanwhile: that read could count it twice later).
 */
export function fillCache(
  db: IndexDb | null,
  cache: ReadCache,
  generation: string,
  put: () => void,
): void {
  if (!db) return;
  if (cache.generation !== generation) return;
  if (db.changeSeq() === cache.seq) put();
}

function followAnalysis(
  db: IndexDb,
  cache: ReadCache,
  keyOf: AnalysisKeyOf | undefined,
  step: number,
): void {
  if (!keyOf || db.docs([step]).length === 0) return;
  const json = db.entryJson(step);
  if (json === undefined) return;
  const akey = keyOf(JSON.parse(json) as IndexEntry);
  const a = db.analyses([akey]).get(akey);
  if (a) cache.addDoc(FIELD_RANKED, step, a);
}
