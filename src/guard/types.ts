/** How much a finding matters. `high` findings add a warning line to a rendered page. */
export type Severity = 'low' | 'medium' | 'high';

/** The three kinds of table the guard publishes (one file each under `guard/`). */
export type TableKind = 'secrets' | 'injection' | 'active-content';

export type { GuardFamily, GuardPattern, GuardTable, Matcher, RegexSpec } from './table-schema.js';

/** One finding of a scan: a pattern and where it matched (UTF-8 byte offsets of the input). */
export interface GuardFinding {
  pattern_id: string;
  /** The table the pattern is published in (relative to `guard/`). */
  table: string;
  severity: Severity;
  start: number;
  end: number;
}

/** Findings on a paged-in text (injection lexicon and active content), in offset order. */
export type PageFinding = Omit<GuardFinding, 'table'>;

/** Findings of one pattern on one page, as pack metadata and session events record them. */
export interface FindingSummary {
  pattern_id: string;
  severity: Severity;
  count: number;
}
