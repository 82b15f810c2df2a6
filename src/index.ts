// contextfold: the IPCF-1.1 engine. Named exports only; adapters are subpath exports
// (`contextfold/ai-sdk`, `contextfold/mcp`, …) so the core never imports a vendor SDK.

export { ContextFold } from './engine/context-fold.js';
export { DEMO_QUESTIONS, demoHistory, runDemo } from './engine/demo-scenario.js';
export type {
  ContextFoldEngine,
  EntriesPage,
  EvictResult,
  FoldInput,
  FoldResult,
  HashCheck,
  HydrateOptions,
  HydrateResult,
  NodeCheck,
  NodeFields,
  OpenOptions,
  Page,
  PageInFailure,
  PageInResult,
  ProblemKind,
  RecallCandidate,
  RecallResult,
  RecallStatus,
  RetrievalMode,
  ScanPick,
  ScanResult,
  StatusResult,
  ValidateResult,
  ValidationProblem,
} from './engine/types.js';
export { type Projection, type ProjectionInput, project } from './extract/projection.js';
export { extractTerms, foldToken, identifiersOf, nodeTerms, queryTerms } from './extract/terms.js';
export {
  o200kTokenizer,
  referenceTokenizer,
  resolveTokenizer,
  type Tokenizer,
} from './extract/tokenizer.js';
// The guard: secret redaction before writes, injection / active-content findings on pages.
export * from './guard/index.js';
// The harness: sessions, context packs, folded-step records, events and replay.
export * from './harness/index.js';
export {
  canonicalJson,
  canonicalSha256,
  compareCodePoints,
  prettyJson,
  sha256Hex,
  sortedUnique,
} from './protocol/canonical-json.js';
export {
  BrokenReferenceError,
  ContextFoldError,
  type ErrorCode,
  type ErrorDetails,
  exitCodeFor,
  GuardTableError,
  IntegrityCheckError,
  ipcfErrorName,
  isBrokenReferenceError,
  isContextFoldError,
  isGuardTableError,
  isIntegrityCheckError,
  isNodeNotFoundError,
  isOrphanedNodeError,
  isPathContainmentError,
  isStoreNotFoundError,
  isUsageError,
  LockTimeoutError,
  NodeNotFoundError,
  OrphanedNodeError,
  PathContainmentError,
  StepConflictError,
  StoreNotFoundError,
  UsageError,
} from './protocol/errors.js';
export {
  DEFAULT_POLICY,
  type HydrationPolicy,
  parsePolicy,
  policyHash,
} from './protocol/policy.js';
export {
  type ColdNode,
  DEFAULT_SESSION_ID,
  type EvictionLogFile,
  type FoldedStep,
  type IndexEntry,
  IPCF_VERSION,
  PROJECTION_VERSION,
  type RecallIndexFile,
  type RedactionRecord,
} from './protocol/types.js';
