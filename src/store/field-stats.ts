import type { FieldStats, PostingField } from './index-backend.js';
import type { IndexState } from './index-db.js';

/**
 * A field's BM25 collection statistics from an index state's counters (the same for every
 * backend); `lastDocStep` is asked only when the ranked field has documents.
 */
export function fieldStatsOf(
  field: PostingField,
  state: Pick<
    IndexState,
    'entries' | 'rankedDocs' | 'rankedLength' | 'rankedParts' | 'rankedPartLength'
  >,
  lastDocStep: () => number,
): FieldStats {
  if (field !== 'ranked') {
    return { docs: state.entries, totalLength: 0, parts: 0, partLength: 0, lastStep: -1 };
  }
  return {
    docs: state.rankedDocs,
    totalLength: state.rankedLength,
    parts: state.rankedParts,
    partLength: state.rankedPartLength,
    lastStep: state.rankedDocs === 0 ? -1 : lastDocStep(),
  };
}
