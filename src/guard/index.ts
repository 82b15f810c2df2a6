/**
 * `contextfold/guard`: secrets removed before anything is written, injection and active-content
 * findings on every page, and the guard corpus (002 form) with its declaration. The root
 * re-exports `Redactor`, `scanPage` and `runGuardConformance`.
 *
 * @example
 * import { loadGuardTables, scanText } from 'contextfold/guard';
 */

export type { VerdictCounts } from '../protocol/verdict.js';
export {
  buildGuardDeclaration,
  checkGuardDeclaration,
  GUARD_DECLARATION_SCHEMA,
  type GuardCaseResult,
  type GuardConformanceOptions,
  type GuardDeclaration,
  type GuardRunReport,
  type GuardVerdict,
  runGuardConformance,
  validateGuardDeclaration,
} from './conformance.js';
export { SecretDetector, type SecretDetectorOptions, type SecretHit } from './detect-secrets.js';
export type { MatchSpan, SyncMatch } from './matchers.js';
export { type RedactedText, redactionMarker, type TextRedaction } from './redact-text.js';
export {
  defaultRedactor,
  type FoldFields,
  type RedactedBytes,
  Redactor,
  type RedactorOptions,
} from './redactor.js';
export { pageWarning, renderPageContent } from './render-page.js';
export { type GuardScanResult, type ScanFinding, scanInput } from './scan-input.js';
export { PAGE_TABLE_KINDS, scanPage, scanText, summarizeFindings } from './scan-page.js';
export { GUARD_TABLE_VERSION } from './table-schema.js';
export {
  type CompiledPattern,
  DECLARED_TABLES,
  DEFAULT_GUARD_DIR,
  type GuardTables,
  loadGuardTables,
} from './tables.js';
export type {
  FindingSummary,
  GuardFamily,
  GuardFinding,
  GuardPattern,
  GuardTable,
  Matcher,
  PageFinding,
  RegexSpec,
  Severity,
  TableKind,
} from './types.js';
