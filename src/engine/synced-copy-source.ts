import type { CopySource, EvictionRecord } from '../store/copy-source.js';
import type { ContextFold } from './context-fold.js';

/**
 * A store read for a copy through its synced index (a store directory, whose index is a file:
 * what it holds in memory does not grow with the store). A source whose index left a record out
 * (malformed, another step's) is refused, named, before anything is read.
 */
export async function syncedCopySource(source: ContextFold): Promise<CopySource> {
  const src = source.backend;
  const total = (await source.entriesPage({ limit: 0 })).total;
  src.assertConsistent();
  return {
    total,
    entryPages: (pageSize) => source.entryPages({ pageSize }),
    async *evictionPages(): AsyncGenerator<EvictionRecord[]> {
      yield src.evictions();
    },
    nodeSizes: (steps) => src.nodeSizes(steps),
    load: (steps) => src.load(steps),
    verifyNode: (entry) => src.verifyNode(entry),
    close: async () => {},
  };
}
