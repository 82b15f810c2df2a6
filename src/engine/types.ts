import type { Tokenizer } from '../extract/tokenizer.js';
import type { HydrationPolicy } from '../protocol/policy.js';
import type {
  Page,
  PageFinding,
  PageInFailure,
  PageWindow,
  RecallResult,
  RetrievalMode,
  ScanResult,
} from '../protocol/results.js';
import type { IndexEntry } from '../protocol/types.js';
import type { IndexWarning } from '../store/index-backend.js';
import type { RecordsRead } from '../store/records-head.js';
import type { RecordsMark } from '../store/records-mark.js';

export type { Tokenizer } from '../extract/tokenizer.js';
export type {
  Page,
  PageInFailure,
  PageWindow,
  RecallCandidate,
  RecallResult,
  RecallStatus,
  RetrievalMode,
  ScanPick,
  ScanResult,
} from '../protocol/results.js';
export type { IndexCheck, IndexWarning } from '../store/index-backend.js';

/** Options of {@link ContextFold.open}. */
export interface OpenOptions {
  /** The store directory, e.g. `.contextfold`. Created on first write. */
  dir?: string;
  /**
   * Where the store lives, overriding `dir`: a directory, or a PostgreSQL URL
   * `postgres://user@host:port/db?store_id=NAME` (a shared archive; see docs/team.md).
   */
  store?: string;
  /** PostgreSQL: connections in this process's pool. Default 4. */
  poolSize?: number;
  /** PostgreSQL: the longest a statement may run before it is cancelled. Default 60 s. */
  statementTimeoutMs?: number;
  /**
   * Refuse a directory that holds no store yet (`StoreNotFoundError`) instead of opening it
   * empty. Readers set it so a mistyped directory is reported, not read as an empty store.
   */
  mustExist?: boolean;
  /** Active hydration policy. Default: `hydration_policy.json` in the store, else the reference default. */
  policy?: HydrationPolicy;
  /** Token counter for caps and costs. Default `o200k`. */
  tokenizer?: Tokenizer | 'o200k' | 'reference';
  /** `session_id` written into new cold nodes. Default `default-session`. */
  sessionId?: string;
  /** Page-in algorithm for `scan` and `pageIn`. Default `ranked`; `reference` is the IPCF RGSC (vectors, conformance). */
  retrieval?: RetrievalMode;
  /** Clock for `folded_at` / `evicted_at` (never hashed into a projection). */
  clock?: () => Date;
  /**
   * How long a writer waits for the inter-process write lock (an OS lock the kernel releases
   * when its holder dies; long batches release it between rounds). Default 30 s.
   */
  lockTimeoutMs?: number;
  /** Journal entries beyond which a fold compacts the journal into recall_index.json. */
  journalCompactThreshold?: number;
  /**
   * Told when the derived index (`index-<n>-<tag>.sqlite` in the store) had to be rebuilt from the
   * store's files (missing, corrupt, foreign, interrupted), or is kept in memory because the
   * store directory is not writable. The CLI prints one line on stderr.
   */
  onWarning?: (warning: IndexWarning) => void;
  /**
   * Write nothing into the store, not even the derived index (an inspector, a checker): the
   * index file a writer closed is read in place (read-only, nothing created beside it), else a
   * private in-memory copy of it is used, or an index is built in memory from the store's files
   * when there is none or it is not current; folds and evictions are refused.
   */
  readOnly?: boolean;
  /**
   * @deprecated Ignored. Ranked analyses now live in the store's derived index; nothing is
   * written outside the store.
   */
  cacheDir?: string | false;
  /**
   * Redact secrets before anything is written (default true): payloads, summaries and explicit
   * term lists pass through the guard's secrets table, matches become `[REDACTED:…]`, and the
   * node says `sanitized: true` with its `redactions`. `false` stores the bytes as given and
   * writes `sanitized: false`, as the reference engine does.
   */
  redact?: boolean;
}

/** One turn to fold. `content` is the raw payload: a string, or bytes (any bytes, kept exactly). */
export interface FoldInput {
  stepId: number;
  summary: string;
  /**
   * The payload. Absent or empty, the summary is the payload (the IPCF rule): it is hashed and
   * stored as `raw_content`, and `hydrate` returns it.
   */
  content?: string | Uint8Array;
  /** Explicit term lists replace the extracted ones (stored as given, as the reference does). */
  files?: string[];
  commands?: string[];
  errors?: string[];
}

/**
 * What a fold wrote (or found already written, `already_folded: true`): the index entry's
 * identity, hashes and terms.
 */
export interface FoldResult extends Omit<IndexEntry, 'projection_version' | 'summary' | 'evicted'> {
  already_folded: boolean;
}

/** Options of `scan` and `pageIn`. */
export interface ScanOptions {
  /** Page-in algorithm for this call (default: the engine's `retrieval`). */
  mode?: RetrievalMode;
  /**
   * Ranked mode: turns from this step on are still in the live context (after a compaction):
   * they are scored but never paged, and keep an intent only when they hold what is asked.
   */
  liveFrom?: number;
  /** Ranked mode: steps that only summarise others (compaction summaries): never paged or owners. */
  lossy?: readonly number[];
  /** A tighter per-turn budget than the policy's, in tokens, in either mode (e.g. a byte-bounded hook context). */
  maxTokens?: number;
  /**
   * Ranked `pageIn`: a page whose window stops short of the payload's end also shows its last
   * lines (`Page.window.tail_lines`), for turns that end with an outcome: an agent turn that
   * merges its narration, tool calls and results ends with the last result (a test summary, an
   * error, a returned id). Default false.
   */
  tail?: boolean;
}

/** Options of `hydrate`: which window or chunk of the payload to serve, and a tighter cap. */
export interface HydrateOptions {
  /** Serve this window of lines (a ranked page) instead of a chunk. */
  window?: PageWindow;
  /** 0-based chunk index when the payload is over the per-call cap. Default 0. */
  chunk?: number;
  /** A tighter cap than the policy's per-call cap, in tokens. */
  maxTokens?: number;
}

/** Verified content of one cold node (CONF-05/06/09). */
export interface HydrateResult {
  step_id: number;
  /** The chunk's text. For non-UTF-8 payloads, a lossy decoding; use `hydrateBytes` for exact bytes. */
  content: string;
  tokens: number;
  chunk: number;
  chunks: number;
  truncated: boolean;
  payload_sha256: string;
  verified: true;
  encoding: 'utf8' | 'base64';
  /** Injection and active-content findings on `content` (UTF-8 byte offsets into it). */
  findings: PageFinding[];
}

/** What `evict` recorded: the step left the resident set at `evicted_at`. */
export interface EvictResult {
  step_id: number;
  evicted_at: string;
}

/** The kinds of inconsistency `validate` reports. */
export type ProblemKind =
  | 'orphaned_node'
  | 'broken_reference'
  | 'integrity'
  | 'path_containment'
  | 'journal'
  | 'index';

/** One problem `validate` found, with the exact path it concerns. */
export interface ValidationProblem {
  kind: ProblemKind;
  step_id: number | null;
  path: string;
  message: string;
}

/** What `validate` checked; `ok` only when `problems` is empty. */
export interface ValidateResult {
  ok: boolean;
  checked: number;
  /** Verified nodes whose file says `sanitized: true` (redacted before it was written). */
  sanitized: number;
  problems: ValidationProblem[];
  /**
   * What was said while it ran, as `onWarning` hears it (`code`, `path`, `message`): a leftover
   * file of a dead rebuild or compaction (`DEAD_BUILD_FILE`), the derived index rebuilt from the store's files
   * (`INDEX_REBUILT`), kept in memory (`INDEX_IN_MEMORY`), a torn journal tail set aside
   * (`JOURNAL_TAIL_QUARANTINED`). A warning does not make `ok` false.
   */
  warnings: IndexWarning[];
}

/** One of a node's three hashes as the index records it, as the file stores it, and recomputed. */
export interface HashCheck {
  name: 'artifact_sha256' | 'payload_sha256' | 'projection_sha256';
  index: string;
  /** As stored in the cold node file (null if the file cannot be read). */
  file: string | null;
  /** Recomputed from the file's content; null when not recomputable (the projection hash). */
  recomputed: string | null;
  ok: boolean;
}

/** A cold node's fields, without its payload; fields this engine does not know are in `extra`. */
export interface NodeFields {
  ipcf_version: string | null;
  projection_version: string | null;
  session_id: string | null;
  folded_at: string | null;
  summary: string | null;
  raw_content_encoding: string | null;
  sanitized: boolean | null;
  status: string | null;
  token_estimate: number | null;
  /** Other fields of the file (e.g. guard findings), by key in code-point order. */
  extra: Record<string, unknown>;
}

/** Result of {@link ContextFold.checkNode}: hydrate's verdict on one node, hash by hash. */
export interface NodeCheck {
  step_id: number;
  entry: IndexEntry;
  /** The cold node file (canonical path; the recorded `file_path` if it fails containment). */
  path: string;
  /** True exactly when `hydrate` would serve the node. */
  verified: boolean;
  /** Why it would be refused, with the path. */
  problem: { code: string; error: string; message: string; path: string } | null;
  hashes: HashCheck[];
  /** The file's fields, or null when it is missing, unreadable or not a JSON object. */
  node: NodeFields | null;
}

/** One page of index entries in step order, and how many there are in all. */
export interface EntriesPage {
  total: number;
  offset: number;
  entries: IndexEntry[];
}

/** What `status` reports about a store: counts, policy, tokenizer and retrieval in effect. */
export interface StatusResult {
  dir: string;
  session_id: string;
  projection_version: string;
  nodes: number;
  evicted: number;
  journal_entries: number;
  total_token_estimate: number;
  policy: HydrationPolicy;
  folding_policy_hash: string;
  tokenizer: string;
  retrieval: RetrievalMode;
  /** The derived index: its file, and nodes whose ranked analysis is still to be computed. */
  index?: { path: string | null; state: 'fresh' | 'in-memory'; pending_analysis: number };
  /** Whether this engine redacts what it folds. */
  redact: boolean;
  /** Nodes whose cold node says `sanitized: true` (redacted before write). */
  sanitized_nodes: number;
  /** Nodes written without redaction (`sanitized: false`, as the reference engine writes). */
  unsanitized_nodes: number;
  /** Nodes whose file is missing, unparsable or not the indexed artifact (`validate` says why). */
  unreadable_nodes: number;
}

/** Result of {@link ContextFoldEngine.pageIn}: the scan, the verified pages, and refused pages. */
export interface PageInResult {
  scan: ScanResult;
  pages: Page[];
  failures: PageInFailure[];
  tokens: number;
}

/** The engine's public surface. Every result is plain JSON. */
export interface ContextFoldEngine {
  /** The store's directory, or its database URL (with `store_id`, no password). */
  readonly dir: string;
  /**
   * Appends newline-terminated lines of a kind (a plain name, `events`: a session's log, kept
   * as `events.jsonl` in a store directory) to the store. With
   * `after`, only if the log is still as long as the caller last saw it (a `StepConflictError`
   * otherwise, nothing written): two writers of one session never interleave their histories.
   */
  appendRecords(kind: string, text: string, after?: RecordsMark): Promise<void>;
  /** Every line of a kind, in append order, and where it lives. */
  readRecords(kind: string): Promise<RecordsRead>;
  readonly policy: HydrationPolicy;
  readonly tokenizer: Tokenizer;
  /** Whether folds are redacted (see {@link OpenOptions.redact}). */
  readonly redact: boolean;
  /**
   * The text with secrets replaced by markers, exactly as a fold would store it; unchanged when
   * the engine does not redact. Callers that persist user text elsewhere in the store (session
   * events, hook state) pass it through this first.
   */
  redactText(text: string): Promise<string>;
  /**
   * Texts that belong together (the messages of one append), redacted jointly: a value removed
   * from one is also removed where it recurs in the others (`secret:repeated-value`).
   */
  redactTexts(texts: readonly string[]): Promise<string[]>;
  fold(input: FoldInput): Promise<FoldResult>;
  /**
   * Folds a batch. `onProgress` hears of both passes: `preparing` (redaction and node building,
   * before anything is written; most of a large import's time) and `writing`.
   */
  foldMany(
    inputs: FoldInput[],
    onProgress?: (done: number, total: number, phase: 'preparing' | 'writing') => void,
  ): Promise<FoldResult[]>;
  recall(query: string, options?: { limit?: number }): Promise<RecallResult>;
  scan(prompt: string, options?: ScanOptions): Promise<ScanResult>;
  hydrate(stepId: number, options?: HydrateOptions): Promise<HydrateResult>;
  hydrateBytes(stepId: number): Promise<Uint8Array>;
  pageIn(prompt: string, options?: ScanOptions): Promise<PageInResult>;
  evict(stepId: number): Promise<EvictResult>;
  status(): Promise<StatusResult>;
  validate(): Promise<ValidateResult>;
  compact(): Promise<{ nodes: number; journal_entries_compacted: number }>;
  /** Index entries in step order (a snapshot; do not mutate). Prefer `entryPages` when large. */
  entries(): Promise<IndexEntry[]>;
  /** The entry of one step, if folded. */
  entry(stepId: number): Promise<IndexEntry | undefined>;
  /** Up to `limit` entries with a step above `after`, in step order. */
  entriesAfter(options?: { after?: number; limit?: number }): Promise<IndexEntry[]>;
  /** Every entry in step order, one page at a time. */
  entryPages(options?: { pageSize?: number }): AsyncGenerator<IndexEntry[]>;
  /** Compacts the journal and closes, after the operations still in flight settle. */
  close(options?: { compact?: boolean }): Promise<void>;
}
