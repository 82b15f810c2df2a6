// The options of a LocalStore in their own module: the store's collaborators (its index
// generation, write path and compaction) read them without importing the store itself.
import type { IndexWarning } from './index-backend.js';
import type { AnalysisKeyOf } from './index-loader.js';

/** Options of a `LocalStore` (`local-store.ts`). */
export interface LocalStoreOptions {
  /** How long a writer (or a reader that must catch up) waits for the write lock. */
  lockTimeoutMs: number;
  /** Compact when the journal holds more than max(this, snapshot entries) records. */
  compactThreshold: number;
  clock: () => Date;
  /** The analyzer whose analyses ranked postings come from (its version and content key). */
  analyzer?: { version: string; keyOf: AnalysisKeyOf };
  /** Told when the derived index had to be rebuilt, or lives in memory. */
  onWarning?: (warning: IndexWarning) => void;
  /**
   * Write nothing at all into the store (an inspector): the index is a private in-memory copy
   * of the current index file (or built from the store's files when there is none or it is
   * not current), and writes are refused.
   */
  readOnly?: boolean;
}
