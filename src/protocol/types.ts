/** The protocol version every node and index carries. */
export const IPCF_VERSION = '1.1';
/** The projection algorithm this engine implements (reference-exact). */
export const PROJECTION_VERSION = 'ipcf-projection-v2';
/** Session id the reference engine writes when none is given. */
export const DEFAULT_SESSION_ID = 'default-session';

/** How a payload is stored in `raw_content`: absent means the UTF-8 text itself. */
export type PayloadEncoding = 'base64';

/** A cold node file (`cold_nodes/step_NNNNNN.json`), field for field as the reference writes it. */
export interface ColdNode {
  ipcf_version: string;
  projection_version: string;
  step_id: number;
  session_id: string;
  folded_at: string;
  summary: string;
  raw_content: string;
  /** Present only for payloads that are not valid UTF-8 (an extension; hashed like any field). */
  raw_content_encoding?: PayloadEncoding;
  normalized_content: string;
  payload_sha256: string;
  projection_sha256: string;
  identifiers: string[];
  files: string[];
  commands: string[];
  errors: string[];
  token_estimate: number;
  sanitized: boolean;
  status: 'cold' | 'hydrated' | 'evicted';
  /** What redaction removed before the write (an extension; present only when non-empty). */
  redactions?: RedactionRecord[];
  artifact_sha256: string;
  [extra: string]: unknown;
}

/**
 * One value removed from a cold node before it was written: which pattern matched, where its
 * marker (`[REDACTED:…]`) sits in the stored field, and the SHA-256 of the removed bytes. The
 * value itself is never stored.
 */
export interface RedactionRecord {
  /** `raw_content` (the payload), `summary`, or a term list entry such as `commands[0]`. */
  field: string;
  /** The secret pattern that matched (`secret:…`); overlapping matches share one marker. */
  pattern_id: string;
  /** Further patterns whose matches overlapped this one, sorted (absent when none). */
  merged_pattern_ids?: string[];
  /** UTF-8 byte offsets of the marker in the stored field (a base64 payload: its decoded bytes). */
  start: number;
  end: number;
  /** SHA-256 (hex) of the removed bytes. */
  removed_sha256: string;
}

/** One entry of `recall_index.json` `nodes`, keyed by the decimal step id. */
export interface IndexEntry {
  step_id: number;
  projection_version: string;
  summary: string;
  payload_sha256: string;
  projection_sha256: string;
  artifact_sha256: string;
  file_path: string;
  token_estimate: number;
  folded_at: string;
  identifiers: string[];
  files: string[];
  commands: string[];
  errors: string[];
  evicted: boolean;
}

/** `recall_index.json`: the page table. */
export interface RecallIndexFile {
  ipcf_version: string;
  projection_version: string;
  nodes: Record<string, IndexEntry>;
  created_at?: string;
  session_id?: string;
}

/** `eviction_log.json`. */
export interface EvictionLogFile {
  evicted: { step_id: number; evicted_at: string }[];
}

/** The hot projection kept in the prompt in place of a folded turn (folded_step.schema.json). */
export interface FoldedStep {
  step_id: number;
  timestamp: string;
  summary: string;
  status: 'SUCCESS' | 'FAILED' | 'PARTIAL' | 'BLOCKED';
  artifacts: { cold_node_ref: string; [k: string]: unknown };
  target_files?: string[];
  /** Files of the turn left out of `target_files` (its count is bounded); absent when none. */
  target_files_omitted?: number;
  action_type?:
    | 'CODE_MODIFICATION'
    | 'COMMAND_EXECUTION'
    | 'EXPLORATION'
    | 'REFACTOR'
    | 'VERIFICATION'
    | 'OTHER';
}

/** The four term lists a projection carries. */
export interface ExtractedTerms {
  identifiers: string[];
  files: string[];
  commands: string[];
  errors: string[];
}
