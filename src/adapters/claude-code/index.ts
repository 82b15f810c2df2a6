/**
 * Claude Code integration: command hooks (`UserPromptSubmit`, `PreCompact`, `SessionStart`) that
 * fold the session transcript incrementally into a per-session store and page verified archived
 * turns back in after a compaction, plus the installer that merges them into settings.json.
 *
 * Honest limit: text a hook injects stays in Claude Code's transcript until the next compaction,
 * so single-turn eviction (CONF-07) cannot be enforced in hook mode.
 *
 * @example
 * import { runHook } from 'contextfold/claude-code';
 * const out = await runHook({ event: 'user-prompt-submit', input, baseDir: '.contextfold' });
 */
export {
  type ArchivedContext,
  type ArchivedContextOptions,
  archivedContext,
  CONTEXT_HEADER,
  type HookPage,
  MAX_CONTEXT_BYTES,
} from './archived-context.js';
export {
  CLAUDE_EVENT_NAMES,
  HOOK_EVENTS,
  type HookEvent,
  type HookInput,
  parseHookInput,
} from './hook-input.js';
export {
  type HookRuntime,
  type HookRuntimeOptions,
  type RuntimeKind,
  resolveHookCommand,
} from './hook-runtime.js';
export {
  INGEST_STATE_VERSION,
  type IngestOptions,
  type IngestResult,
  type IngestState,
  ingestTranscript,
  type SkippedRow,
} from './ingest.js';
export {
  HOOK_TIMEOUTS,
  type HookChange,
  hookCommand,
  type InstallResult,
  type InstallScope,
  installClaudeCode,
  settingsPath,
  type UninstallResult,
  uninstallClaudeCode,
} from './install.js';
export {
  DEFAULT_MAX_TURNS_PER_RUN,
  type HookOutcome,
  type HookOutput,
  type RunHookOptions,
  runHook,
} from './run-hook.js';
export { type SessionPaths, sessionPaths } from './session-paths.js';
