import type { PageFinding } from '../protocol/results.js';

// Finding shapes are defined once in protocol (pages carry them through every layer).
export type { FindingSummary, PageFinding, Severity } from '../protocol/results.js';

/** The three kinds of table the guard publishes (one file each under `guard/`). */
export type TableKind = 'secrets' | 'injection' | 'active-content';

export type { GuardFamily, GuardPattern, GuardTable, Matcher, RegexSpec } from './table-schema.js';

/** One finding of a scan: a pattern and where it matched (UTF-8 byte offsets of the input). */
export interface GuardFinding extends PageFinding {
  /** The table the pattern is published in (relative to `guard/`). */
  table: string;
}
