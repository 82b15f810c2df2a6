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
}
