/**
 * `contextfold/harness`: sessions, auto-fold policy, folded-step records, layered context packs,
 * lifecycle events, per-call reports and replay. No vendor SDK is imported here. The root
 * re-exports the main entry points (`Session`, `replaySession`, `readEvents`).
 *
 * @example
 * import { assemblePack, renderPackText } from 'contextfold/harness';
 */

export type { RecordsHead, RecordsRead } from '../store/records-head.js';
export type { RecordsMark } from '../store/records-mark.js';
export {
  type ArchivedBlockInfo,
  formatArchivedBlock,
  type StrippedBlock,
  stripArchivedBlocks,
} from './archived-block.js';
export {
  type CompressionNote,
  type CompressionStrategy,
  compressRecent,
  type PackTurn,
} from './compress.js';
export { buildFoldedStep, type FoldRef, renderFoldedStep } from './folded-step.js';
export { inspectColdNode, renderPackForHuman } from './inspect.js';
export type {
  LiveExcerpt,
  LiveExcerptNote,
  LiveOverflow,
} from './live-excerpt.js';
export {
  type AssistantMessage,
  type HistoryMessage,
  type HistoryRecord,
  type Message,
  messageToRecord,
  parseHistoryRecord,
  parseMessage,
  type Role,
  recordToMessage,
  type SystemMessage,
  type ToolCall,
  type ToolMessage,
  type UserMessage,
} from './messages.js';
export {
  type AssembleInput,
  assemblePack,
  type ContextPack,
  FOLDED_STEPS_FOOTER,
  FOLDED_STEPS_HEADER,
  type FoldedNote,
  type Layer,
  type PackEntry,
  type PackMetadata,
  type PackPage,
  type PagedInNote,
  type PinnedItem,
  packSha256,
  renderPackText,
  type TruncationNote,
} from './pack.js';
export {
  beginCall,
  type CallReport,
  continueSession,
  endCall,
  type PerCallTotals,
  runPerCall,
} from './per-call.js';
export { renderMessage, renderMessages } from './render.js';
export {
  type ReplayCheckpoint,
  type ReplayMismatch,
  type ReplayOptions,
  type ReplayResult,
  type ReplaySource,
  type ReplayStop,
  replaySession,
} from './replay.js';
export {
  type AfterTurnResult,
  defaultSummary,
  Session,
  type SessionOptions,
  type Summarizer,
  type SummarizerInput,
} from './session.js';
export {
  type ChainHead,
  EVENTS_FILE,
  type EventLogMark,
  type FoldReason,
  loadEvents,
  parseEvents,
  readEvents,
  type SessionConfig,
  type SessionEvent,
  type SessionEventType,
  type StrippedRecord,
  storeEvents,
} from './session-events.js';
export {
  describeTurn,
  MAX_SUMMARY_CHARS,
  type SummaryMessage,
  summarizeTurn,
  type TurnFacts,
} from './summarize.js';
export { TokenMeter } from './token-meter.js';
export { groupTurns, type Turn, type TurnStepIds, turnPayload } from './turns.js';
export { runTurns, type TurnReport } from './turns-file.js';
