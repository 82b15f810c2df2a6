// Result shapes shared by retrieval, engine, harness and adapters: defined once, here, so no
// layer has to import them from a layer above it.
import { type ContextFoldError, ipcfErrorName } from './errors.js';

/** Which page-in algorithm `scan` uses. `reference` is the IPCF reference RGSC (vectors, conformance). */
export type RetrievalMode = 'reference' | 'ranked';

/** Recall labels (CONF-04). */
export type RecallStatus = 'latest_chronological' | 'superseded' | 'historical' | 'related';

/** One archived turn recall returns, with its CONF-04 label and why it ranked where it did. */
export interface RecallCandidate {
  step_id: number;
  status: RecallStatus;
  coverage: number;
  score: number;
  summary: string;
  folded_at: string;
}

/** What `recall` found for a query, best candidate first. */
export interface RecallResult {
  query: string;
  candidates: RecallCandidate[];
}

/** One archived turn the prompt scan chose to page in, and what it costs. */
export interface ScanPick {
  step_id: number;
  /** Query terms this pick took from the residual, sorted by code point. */
  matched_terms: string[];
  /** Tokens it costs: min(tokens, per-call cap, per-turn cap). */
  cost: number;
  /**
   * Ranked mode: the CONF-04 label of the pick within its intent's group, by step
   * (`latest_chronological`, `superseded`, …; `related` for a neighbour paged with a pick).
   */
  status?: RecallStatus;
  /** Ranked mode: the linear score (0 for a companion). */
  score?: number;
  /** Ranked mode: the probability this turn holds the answer (0 for a companion). */
  probability?: number;
  /** Ranked mode: the indexed keys the page window focuses on, heaviest first. */
  focus?: KeyMatch[];
  /** Ranked mode: the lines of the turn's best-scoring block. */
  block?: LineRange;
  /** Ranked mode, a call turn paged with its result: the result's step. */
  companion_of?: number;
  /** Ranked mode, a page that is not an intent owner: the owner it is grouped with. */
  alternative_of?: number;
}

/** What a prompt asks beyond its words (ranked scan). */
export interface PromptIntent {
  /** `latest`: "now", "current", "last time"; `earliest`: "first", "initially"; else `none`. */
  time: 'latest' | 'earliest' | 'none';
  /** The prompt asks about an error, failure or warning. */
  error: boolean;
}

/** An indexed key a prompt key matches (itself, a stem or a compound part) and its weight. */
export interface KeyMatch {
  key: string;
  weight: number;
}

/** Lines `[start_line, end_line)` of a payload. */
export interface LineRange {
  start_line: number;
  end_line: number;
}

/** Why a word of the prompt is not searched for (ranked scan). */
export type DropReason = 'stopword' | 'time-cue' | 'not-in-store' | 'too-long' | 'key-limit';

/** A prompt word the scan does not search for, and why. */
export interface DroppedTerm {
  term: string;
  reason: DropReason;
}

/** The software MMU's selection for a prompt (CONF-13), in pick order. */
export interface ScanResult {
  query_terms: string[];
  /**
   * Ranked mode: the prompt words that are not searched for, with the reason, in the order the
   * scan reads them; the first 100 (`MAX_DROPPED_TERMS`): a pasted log drops thousands.
   */
  dropped_terms?: DroppedTerm[];
  /** Ranked mode: dropped words beyond those listed in `dropped_terms` (absent when none). */
  dropped_terms_omitted?: number;
  /** Ranked mode: what the prompt asks beyond its words (the time it points at, an error). */
  intent?: PromptIntent;
  selected: ScanPick[];
  /** Picks whose intent was owned but that did not fit the per-turn budget (never replaced by older nodes). */
  budget_dropped: ScanPick[];
  /** Ranked mode with `liveFrom`: live turns that hold what an older candidate holds (it is not paged). */
  live_owners?: number[];
}

/** A window of whole lines of a payload (a ranked page), as `hydrate` can re-derive it. */
export interface PageWindow {
  start_line: number;
  end_line: number;
  /** Lines in the payload (as split for this cap). */
  lines?: number;
  /** The payload's last lines, shown after the window (absent: none). */
  tail_lines?: number;
  /** The token cap the window was cut to. */
  max_tokens: number;
}

/** How much a guard finding matters. `high` findings add a warning line to a rendered page. */
export type Severity = 'low' | 'medium' | 'high';

/**
 * A guard finding on a paged-in text (injection lexicon, active content): the published
 * pattern id and where it matched, as UTF-8 byte offsets into the text.
 */
export interface PageFinding {
  pattern_id: string;
  severity: Severity;
  start: number;
  end: number;
}

/** Findings of one pattern on one page, as pack metadata and session events record them. */
export interface FindingSummary {
  pattern_id: string;
  severity: Severity;
  count: number;
}

/** One verified page placed into a prompt for a single turn. */
export interface Page {
  step_id: number;
  content: string;
  tokens: number;
  payload_sha256: string;
  chunk: number;
  chunks: number;
  truncated: boolean;
  matched_terms: string[];
  /**
   * Ranked mode (issue 6): the window of whole lines paged in, `[start_line, end_line)` of
   * `lines`, cut to `max_tokens`. `hydrate(step, { window })` re-derives it byte for byte.
   */
  window?: PageWindow;
  /** Injection and active-content findings on `content` (UTF-8 byte offsets into it). */
  findings: PageFinding[];
}

/**
 * A page that was selected but refused (failed verification, missing, …): it is reported with
 * its error, never paged in and never silently replaced.
 */
export interface PageInFailure {
  step_id: number;
  code: string;
  error: string;
  message: string;
}

/**
 * The report of a page that was selected but refused (failed verification, missing, …): it
 * is never paged in and never silently replaced.
 *
 * @example
 * failures.push(pageFailure(137, err)); // { step_id: 137, code: 'INTEGRITY_CHECK', error: 'IntegrityCheckError', … }
 */
export function pageFailure(stepId: number, e: ContextFoldError): PageInFailure {
  return { step_id: stepId, code: e.code, error: ipcfErrorName(e.code), message: e.message };
}
