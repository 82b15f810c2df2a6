/**
 * `contextfold/protocol`: the IPCF-1.1 building blocks every layer shares: canonical JSON and
 * hashes (byte-compatible with the reference engine), the hydration policy, the persisted store
 * formats, result shapes and the error model. The root re-exports the errors and the policy from here.
 *
 * @example
 * import { canonicalSha256, type ColdNode } from 'contextfold/protocol';
 */
export {
  canonicalJson,
  canonicalSha256,
  compareCodePoints,
  type JsonValue,
  prettyJson,
  sha256Hex,
  sortedUnique,
} from './canonical-json.js';
export {
  ContextFoldError,
  type ErrorCode,
  type ErrorDetails,
  exitCodeFor,
  GuardTableError,
  ipcfErrorName,
  isContextFoldError,
  isGuardTableError,
  isLockTimeoutError,
  isStepConflictError,
  isStoreNotFoundError,
  isStoreUnavailableError,
  isUsageError,
  LockTimeoutError,
  StepConflictError,
  StoreNotFoundError,
  StoreUnavailableError,
  UsageError,
} from './errors.js';
export {
  BrokenReferenceError,
  IntegrityCheckError,
  isBrokenReferenceError,
  isIntegrityCheckError,
  isNodeNotFoundError,
  isOrphanedNodeError,
  isPathContainmentError,
  NodeNotFoundError,
  OrphanedNodeError,
  PathContainmentError,
} from './ipcf-errors.js';
export { DEFAULT_POLICY, type HydrationPolicy, parsePolicy, policyHash } from './policy.js';
export type {
  DroppedTerm,
  DropReason,
  FindingSummary,
  KeyMatch,
  LineRange,
  Page,
  PageFinding,
  PageInFailure,
  PageWindow,
  PromptIntent,
  RecallCandidate,
  RecallResult,
  RecallStatus,
  RetrievalMode,
  ScanPick,
  ScanResult,
  Severity,
} from './results.js';
export {
  type ColdNode,
  DEFAULT_SESSION_ID,
  type EvictionLogFile,
  type FoldedStep,
  type IndexEntry,
  IPCF_VERSION,
  type PayloadEncoding,
  PROJECTION_VERSION,
  type RecallIndexFile,
  type RedactionRecord,
} from './types.js';
