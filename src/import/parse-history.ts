import { parseAiderHistory } from './aider-history.js';
import { parseAnthropicMessages } from './anthropic-messages.js';
import { parseClaudeCodeTranscript } from './claude-code-transcript.js';
import { parseCodexRollout } from './codex-rollout.js';
import { parseOpenAiMessages } from './openai-chat.js';
import { parseSweAgentTrajectory } from './swe-agent-trajectory.js';
import type { ImportedTurn, ImportFormat } from './turn.js';
import { parseTurnsJsonl } from './turns-jsonl.js';

/** A parsed history: its turns and, when the format records one, its session id. */
export interface ParsedHistory {
  format: ImportFormat;
  turns: ImportedTurn[];
  sessionId: string | null;
  /** Transcripts: steps of the last turns still open, left out (see `ParsedTranscript.open`). */
  open?: number[];
  /** Records of a type the reader does not know, by type: left out (Codex rollouts). */
  skipped?: Record<string, number>;
}

/**
 * Parses a history in any {@link ImportFormat}. Throws a one-line `UsageError` naming the file and
 * line of the first malformed record; nothing is returned partially.
 *
 * @example
 * const { turns } = parseHistory({ text, format: 'openai', source: 'chat.json' });
 */
export function parseHistory(options: {
  text: string;
  format: ImportFormat;
  source: string;
}): ParsedHistory {
  const { text, format, source } = options;
  switch (format) {
    case 'claude-code': {
      const t = parseClaudeCodeTranscript(text, source);
      return { format, turns: t.turns, sessionId: t.sessionId, open: t.open };
    }
    case 'codex': {
      const t = parseCodexRollout(text, source);
      return { format, turns: t.turns, sessionId: t.sessionId, open: t.open, skipped: t.skipped };
    }
    case 'openai':
      return { format, turns: parseOpenAiMessages(text, source), sessionId: null };
    case 'anthropic':
      return { format, turns: parseAnthropicMessages(text, source), sessionId: null };
    case 'aider':
      return { format, turns: parseAiderHistory(text, source), sessionId: null };
    case 'swe-agent':
      return { format, turns: parseSweAgentTrajectory(text, source), sessionId: null };
    case 'turns':
      return {
        format,
        turns: parseTurnsJsonl(text, { source, stepIds: 'increasing' }),
        sessionId: null,
      };
  }
}
