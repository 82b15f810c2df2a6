// Compaction of a LocalStore: the journal folded into a new `recall_index.json` written from the
// index, in pages that leave the event loop free between them.
import { existsSync, unlinkSync } from 'node:fs';
import { setImmediate as turn } from 'node:timers/promises';
import { fsyncDir, writeFileAtomic } from '../fs/durable-fs.js';
import { prettyJson } from '../protocol/canonical-json.js';
import { isoSeconds } from '../protocol/time.js';
import { fileIdentity } from './file-identity.js';
import type { IndexGeneration } from './index-generation.js';
import type { StoreLayout } from './layout.js';
import type { LocalStoreOptions } from './local-store-options.js';
import { type SnapshotNode, writeSnapshot } from './snapshot-writer.js';

/**
 * Entries per page of a compaction's snapshot stream, with a turn of the event loop between
 * pages: one page (read, inflate, write) stays well under 50 ms even on a loaded machine, so a
 * long-lived process keeps answering while a 100k store compacts (docs/benchmarks.md).
 */
const PAGE = 200;

/** What compaction reaches of its store (which holds it as private state). */
export interface CompactionContext {
  readonly layout: StoreLayout;
  readonly options: LocalStoreOptions;
  readonly gen: IndexGeneration;
  /** Refuses a store whose durable state did not load consistently. */
  assertConsistent(): void;
}

/**
 * Writes `recall_index.json` (and `eviction_log.json`) exactly in the reference layout from
 * the index, streaming in key order, then removes the journal. Call holding the lock.
 */
export async function compactLocked(ctx: CompactionContext): Promise<number> {
  ctx.assertConsistent();
  const st = { ...ctx.gen.state };
  if (st.journal === null && !st.journalStale && st.snapshot !== null) return 0;
  if (st.entries === 0 && st.journal === null && !st.journalStale) return 0;
  const compacted = st.journalRecords;
  const db = ctx.gen.db!;
  const L = ctx.layout;
  const evictions = db.evictions();
  if (evictions.length > 0)
    writeFileAtomic(L.evictionLogPath, prettyJson({ evicted: evictions }), false);
  const createdAt = st.createdAt ?? isoSeconds(ctx.options.clock());
  async function* pages(): AsyncGenerator<SnapshotNode[]> {
    let key = '';
    for (;;) {
      const page = db.nodesAfterKey(key, PAGE);
      if (page.length === 0) return;
      yield page;
      key = page[page.length - 1]!.key;
      await turn();
    }
  }
  const sha = await writeSnapshot(L.indexPath, { createdAt, pages: pages() });
  if (existsSync(L.journalPath)) unlinkSync(L.journalPath);
  fsyncDir(L.dir);
  st.snapshot = fileIdentity(L.indexPath);
  st.snapshotSha256 = sha;
  st.snapshotVerified = false;
  st.evictionLog = fileIdentity(L.evictionLogPath);
  st.journal = null;
  st.journalOffset = 0;
  st.journalLines = 0;
  st.journalRecords = 0;
  st.journalStale = false;
  st.createdAt = createdAt;
  // The change feed starts over with the new snapshot (readers' caches start over too).
  st.epoch++;
  db.transaction(() => {
    db.clearChanges();
    db.setState(st);
  });
  ctx.gen.state = st;
  return compacted;
}
