/**
 * Transcript importers: Claude Code session JSONL (also `.gz`), OpenAI Chat Completions and
 * Anthropic Messages histories, Codex CLI rollouts, aider chat histories, SWE-agent trajectories, and the turns JSONL. Each parses to neutral turns
 * (`{ step_id, role, content }`, step id = position in the history) that fold into a store.
 *
 * @example
 * import { importFile } from 'contextfold/import';
 * await importFile(engine, { file: 'session.jsonl.gz', format: 'claude-code' });
 */
export { parseAiderHistory } from './aider-history.js';
export { parseAnthropicMessages } from './anthropic-messages.js';
export {
  COMPACT_SUMMARY_LABEL,
  type ParsedTranscript,
  parseClaudeCodeTranscript,
  TranscriptReader,
  type TranscriptState,
} from './claude-code-transcript.js';
export { parseCodexRollout } from './codex-rollout.js';
export {
  type BuilderMessage,
  ConversationBuilder,
  type ConversationState,
  type MessagePart,
  type OpenTurn,
  type OpenTurnSegment,
} from './conversation-builder.js';
export { importFile, type LoadedHistory, loadHistoryFile } from './import-file.js';
export {
  foldInputsFor,
  type ImportTurnsOptions,
  type ImportTurnsResult,
  importTurns,
  redactedFoldInputs,
} from './import-turns.js';
export { parseOpenAiMessages } from './openai-chat.js';
export { type ParsedHistory, parseHistory } from './parse-history.js';
export { readSourceText } from './read-source.js';
export { parseSweAgentTrajectory } from './swe-agent-trajectory.js';
export { IMPORT_FORMATS, type ImportedTurn, type ImportFormat, type TurnRole } from './turn.js';
export {
  historyRecordRow,
  type ParseTurnsOptions,
  parseTurnsJsonl,
  readHistoryRecords,
  readTurnsJsonl,
  type StepIdRule,
  type TurnsRow,
} from './turns-jsonl.js';
