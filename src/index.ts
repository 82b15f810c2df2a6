// contextfold: the IPCF-1.1 engine. The root is the curated surface (≤ 77 names, pinned by
// src/exports.test.ts): the engine facade, sessions, the guard's main entry points, errors, and
// the option and result types their signatures use.
// Everything else lives on a subpath (`contextfold/harness`, `contextfold/guard`,
// `contextfold/protocol`, `contextfold/extract`, adapters …) so the root stays small and the
// core never imports a vendor SDK. Named exports only.

export { ContextFold } from './engine/context-fold.js';
export {
  type RepairAction,
  type RepairItem,
  type RepairOptions,
  type RepairResult,
  repairStore,
} from './engine/repair.js';
export {
  type TransferOptions,
  type TransferPhase,
  type TransferResult,
  transferStore,
} from './engine/store-transfer.js';
export type {
  ContextFoldEngine,
  EntriesPage,
  EvictResult,
  FoldInput,
  FoldResult,
  HashCheck,
  HydrateOptions,
  HydrateResult,
  IndexWarning,
  NodeCheck,
  NodeFields,
  OpenOptions,
  Page,
  PageInFailure,
  PageInResult,
  ProblemKind,
  RecallResult,
  ScanOptions,
  StatusResult,
  ValidateResult,
  ValidationProblem,
} from './engine/types.js';
export type { Tokenizer } from './extract/tokenizer.js';
export { type GuardRunReport, runGuardConformance } from './guard/conformance.js';
export { Redactor } from './guard/redactor.js';
export { scanPage } from './guard/scan-page.js';
export type { Message, ToolCall } from './harness/messages.js';
export type { ContextPack } from './harness/pack.js';
export { type ReplayResult, replaySession } from './harness/replay.js';
export {
  type AfterTurnResult,
  Session,
  type SessionOptions,
  type Summarizer,
  type SummarizerInput,
} from './harness/session.js';
export { readEvents, type SessionEvent } from './harness/session-events.js';
// The protocol's errors (every class and its guard), the policy and the IPCF version, reached
// through the protocol's own entry point.
export {
  BrokenReferenceError,
  ContextFoldError,
  DEFAULT_POLICY,
  type ErrorCode,
  GuardTableError,
  type HydrationPolicy,
  IntegrityCheckError,
  IPCF_VERSION,
  isBrokenReferenceError,
  isContextFoldError,
  isGuardTableError,
  isIntegrityCheckError,
  isLockTimeoutError,
  isNodeNotFoundError,
  isOrphanedNodeError,
  isPathContainmentError,
  isStepConflictError,
  isStoreNotFoundError,
  isStoreUnavailableError,
  isUsageError,
  LockTimeoutError,
  NodeNotFoundError,
  OrphanedNodeError,
  type PageFinding,
  PathContainmentError,
  StepConflictError,
  StoreNotFoundError,
  StoreUnavailableError,
  UsageError,
} from './protocol/index.js';
