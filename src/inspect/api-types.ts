// The inspector's web API: what each JSON endpoint returns. Self-contained (no imports) because
// the browser client compiles against it too. The server maps engine and harness results onto
// these view shapes; the client renders them as text only.

/** A store the inspector found under its directory: the directory itself, or a session's store. */
export interface StoreInfo {
  /** Path relative to the inspected directory (`.` for the directory itself), `/`-separated. */
  id: string;
  dir: string;
  has_events: boolean;
}

/** `GET api/stores` */
export interface StoresResponse {
  root: string;
  stores: StoreInfo[];
}

/** `GET api/stores/:id/overview`: counts only, cheap on a 100k-node store. */
export interface OverviewResponse {
  store: StoreInfo;
  nodes: number;
  evicted: number;
  journal_entries: number;
  total_token_estimate: number;
  projection_version: string;
  tokenizer: string;
  retrieval: string;
  per_call_cap: number;
  per_turn_cap: number;
  policy_hash: string;
  /** Bytes of `events.jsonl`, or null when no session is recorded here. */
  events_bytes: number | null;
  /**
   * What the engine warned about while opening or reading the store (e.g. a corrupt derived
   * index rebuilt in memory), each once, oldest first: what the CLI prints on stderr.
   */
  warnings: string[];
}

/** `GET api/stores/:id/disk`: bytes on disk, by part (walks the store; on demand). */
export interface DiskResponse {
  total_bytes: number;
  cold_node_files: number;
  cold_node_bytes: number;
  index_bytes: number;
  events_bytes: number;
}

/** One row of the node list. */
export interface NodeRow {
  step_id: number;
  summary: string;
  token_estimate: number;
  folded_at: string;
  evicted: boolean;
  files: number;
  errors: number;
}

/** `GET api/stores/:id/nodes?offset&limit` */
export interface NodesResponse {
  total: number;
  offset: number;
  limit: number;
  rows: NodeRow[];
}

/** One problem `validate` found, with its path. */
export interface ProblemView {
  kind: string;
  step_id: number | null;
  path: string;
  message: string;
}

/** `GET api/stores/:id/validate` (runs the full integrity scan: on demand only). */
export interface ValidateResponse {
  ok: boolean;
  checked: number;
  sanitized: number;
  /** The first problems found (at most 1,000); `problems_total` counts them all. */
  problems: ProblemView[];
  problems_total: number;
  /**
   * What the engine warned about while validate ran (`code`, `path`, `message`: a leftover file
   * of a dead rebuild `DEAD_BUILD_FILE`, the index rebuilt `INDEX_REBUILT`, ...); they do not make
   * `ok` false.
   */
  warnings: WarningView[];
  ms: number;
}

/** A warning the engine gave, with its stable code and the path it is about. */
export interface WarningView {
  code: string;
  path: string;
  message: string;
}

/** One of the three hashes: as indexed, as stored in the file, recomputed. */
export interface HashView {
  name: string;
  index: string;
  file: string | null;
  recomputed: string | null;
  ok: boolean;
}

/** `GET api/stores/:id/nodes/:step`: the node drawer, verified now. */
export interface NodeResponse {
  step_id: number;
  summary: string;
  token_estimate: number;
  folded_at: string;
  evicted: boolean;
  file_path: string;
  path: string;
  /** The first terms of each kind (at most 300); `term_counts` counts them all. */
  identifiers: string[];
  files: string[];
  commands: string[];
  errors: string[];
  term_counts: { identifiers: number; files: number; commands: number; errors: number };
  verified: boolean;
  problem: { code: string; error: string; message: string; path: string } | null;
  hashes: HashView[];
  /** From the node file, only when it verifies (else null, and `extra` empty). */
  sanitized: boolean | null;
  session_id: string | null;
  status: string | null;
  encoding: string | null;
  /** Fields of the file this engine does not know (guard findings, redactions, …). */
  extra: Record<string, unknown>;
}

/** A run of payload bytes: text, invalid UTF-8 or a control byte as hex, or an invisible character. */
export type PayloadSegment =
  | { kind: 'text'; text: string }
  | { kind: 'hex'; hex: string }
  | { kind: 'invisible'; code: string };

/** `GET api/stores/:id/nodes/:step/payload`: the verified payload as numbered lines. */
export interface PayloadResponse {
  step_id: number;
  bytes: number;
  valid_utf8: boolean;
  total_lines: number;
  /** Lines shown (from line 1); `truncated` when the payload has more. */
  lines: PayloadSegment[][];
  /** Bytes the lines shown stand for; the last line shown may be cut. */
  shown_bytes: number;
  truncated: boolean;
}

/** `GET api/stores/:id/recall?q&limit` */
export interface RecallResponse {
  query: string;
  total: number;
  candidates: {
    step_id: number;
    status: string;
    coverage: number;
    score: number;
    summary: string;
    folded_at: string;
  }[];
}

/** One pick of a scan. */
export interface ScanPickView {
  step_id: number;
  cost: number;
  matched_terms: string[];
  status: string | null;
  companion_of: number | null;
  alternative_of: number | null;
}

/** `GET api/stores/:id/scan?q&mode`: what would be paged in for a prompt (nothing is paged). */
export interface ScanResponse {
  query: string;
  mode: string;
  query_terms: string[];
  selected: ScanPickView[];
  budget_dropped: ScanPickView[];
  ms: number;
}

/** Tokens of a pack by layer; L0 without its pages, which are counted apart. */
export interface LayerTokens {
  L3: number;
  L2: number;
  L1: number;
  L0: number;
  pages: number;
}

/** One row of the session timeline: one pack and every decision taken to build it. */
export interface TimelineRow {
  turn: number;
  step_id: number;
  tokens: number;
  baseline_tokens: number;
  budget: number;
  over_budget: boolean;
  pack_sha256: string;
  /** From the replayed pack; null when the session could not be replayed. */
  layers: LayerTokens | null;
  folded: { step_id: number; reason: string; steps: number[] }[];
  paged_in: { step_id: number; tokens: number; matched_terms: string[]; truncated: boolean }[];
  refused: { step_id: number; error: string; message: string }[];
  evicted: number[];
  compressed: { strategy: string; layer: string; step_id: number; kept_step_id: number }[];
  truncated: { layer: string; steps: number[]; persistent: boolean; reason: string }[];
  warnings: string[];
}

/** `GET api/stores/:id/timeline?offset&limit` */
export interface TimelineResponse {
  /** False when no `events.jsonl` is here. */
  recorded: boolean;
  turns: number;
  events: number;
  budget: number | null;
  tokenizer: string | null;
  replay: {
    ok: boolean;
    /** True when every replayed decision equals the recorded one (ignoring timestamps). */
    matches: boolean | null;
    mismatch: string | null;
    error: string | null;
  };
  offset: number;
  rows: TimelineRow[];
}

/** Part of a message body: plain text, or a paged-in archived block. */
export interface PackSegment {
  kind: 'text' | 'archived';
  text: string;
  step_id: number | null;
}

/** One message of a pack, as rendered into the prompt. */
export interface PackMessageView {
  role: string;
  header: string;
  segments: PackSegment[];
}

/** One layer of a pack: its entries' accounting and its messages. */
export interface PackLayerView {
  layer: 'L3' | 'L2' | 'L1' | 'L0';
  tokens: number;
  entries: { kind: string; step_id: number | null; tokens: number }[];
  messages: PackMessageView[];
}

/** `GET api/stores/:id/packs/:turn`: the pack as sent, rebuilt by replay and re-verified. */
export interface PackResponse {
  turn: number;
  step_id: number;
  tokens: number;
  budget: number;
  tokenizer: string;
  baseline_tokens: number;
  page_tokens: number;
  pack_sha256: string;
  /** True when the rebuilt pack hashes to what the session recorded for this turn. */
  matches_recorded: boolean;
  layers: PackLayerView[];
  paged_in: { step_id: number; tokens: number; matched_terms: string[]; truncated: boolean }[];
  refused: { step_id: number; error: string; message: string }[];
  warnings: string[];
  /** Other metadata the pack carries (e.g. findings per page), as given. */
  metadata: Record<string, unknown>;
}

/** Every error response. */
export interface ErrorResponse {
  error: string;
  code: string;
  message: string;
  path?: string;
}
