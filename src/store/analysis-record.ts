/**
 * A node's content analysis as a backend keeps it: generic postings (`terms` with their term
 * frequencies), the document length, its scoring parts (blocks) with their summed length, and an
 * opaque `features` string, content-addressed by `akey` (analyzer version + payload + summary).
 * The backend never interprets `features`.
 */
export interface NodeAnalysisRecord {
  akey: string;
  terms: readonly string[];
  tfs: readonly number[];
  length: number;
  parts: number;
  partLength: number;
  features: string;
  /**
   * The body and features already deflated as an index file stores them (see `packAnalysis`),
   * computed off the committing thread; a backend that stores them otherwise ignores them.
   */
  packed?: PackedAnalysis;
}

/** An analysis's body (JSON `[terms, tfs]`) and features, deflated. */
export interface PackedAnalysis {
  body: Uint8Array;
  features: Uint8Array;
}
