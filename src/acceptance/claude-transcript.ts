import type { HistoryTurn } from './case-schema.js';
import { callId } from './history.js';

/**
 * Writes Claude Code transcript rows (the field layout of `~/.claude/projects/…/<session>.jsonl`)
 * for a case history: the rows Claude Code appends for a user prompt, an assistant message (one
 * row per content block), tool results, and a compaction (boundary row plus summary row).
 */
export class ClaudeTranscript {
  private n = 0;
  private parent: string | null = null;
  private message = 0;
  readonly rows: string[] = [];

  constructor(readonly sessionId: string) {}

  private row(type: string, extra: Record<string, unknown>): void {
    this.n++;
    const uuid = `00000000-0000-4000-8000-${String(this.n).padStart(12, '0')}`;
    this.rows.push(
      JSON.stringify({
        parentUuid: this.parent,
        isSidechain: false,
        userType: 'external',
        cwd: '/home/dev/app',
        sessionId: this.sessionId,
        version: '2.1.39',
        type,
        uuid,
        timestamp: '2026-03-01T10:00:00.000Z',
        ...extra,
      }),
    );
    this.parent = uuid;
  }

  private assistantMessage(content: unknown[]): Record<string, unknown> {
    return {
      model: 'claude-opus-4-6',
      id: `msg_${String(this.message).padStart(8, '0')}`,
      type: 'message',
      role: 'assistant',
      content,
      stop_reason: null,
      stop_sequence: null,
      usage: { input_tokens: 1, output_tokens: 1 },
    };
  }

  /** A user prompt row. */
  user(text: string): this {
    this.row('user', { message: { role: 'user', content: text } });
    return this;
  }

  /** An assistant text message. */
  assistant(text: string): this {
    this.message++;
    this.row('assistant', { message: this.assistantMessage([{ type: 'text', text }]) });
    return this;
  }

  /** An assistant tool call and the user row carrying its result. */
  tool(id: string, t: NonNullable<HistoryTurn['tool']>): this {
    this.message++;
    this.row('assistant', {
      message: this.assistantMessage([{ type: 'tool_use', id, name: t.name, input: t.input }]),
    });
    this.row('user', {
      message: {
        role: 'user',
        content: [
          {
            tool_use_id: id,
            type: 'tool_result',
            content: t.output,
            ...(t.is_error ? { is_error: true } : {}),
          },
        ],
      },
      toolUseResult: t.output,
    });
    return this;
  }

  /** Claude Code compacted its context here: the boundary row and the summary it continues from. */
  compact(): this {
    this.row('system', {
      subtype: 'compact_boundary',
      content: 'Conversation compacted',
      isMeta: false,
      level: 'info',
      compactMetadata: { trigger: 'auto', preTokens: 150000 },
    });
    this.row('user', {
      message: {
        role: 'user',
        content: 'This session is being continued from a previous conversation.',
      },
      isVisibleInTranscriptOnly: true,
      isCompactSummary: true,
    });
    return this;
  }

  /**
   * A case history: compacted turns first, then the compaction, then the turns still live in
   * Claude Code's context (`host_context: "live"`).
   */
  history(turns: readonly HistoryTurn[]): this {
    let compacted = false;
    const anyCompacted = turns.some((t) => t.host_context !== 'live');
    turns.forEach((t, i) => {
      if (anyCompacted && !compacted && t.host_context === 'live') {
        this.compact();
        compacted = true;
      }
      if (t.user !== undefined) this.user(t.user);
      if (t.tool) this.tool(`toolu_${callId(i)}`, t.tool);
      if (t.assistant !== undefined) this.assistant(t.assistant);
    });
    if (anyCompacted && !compacted) this.compact();
    return this;
  }

  /** The rows from `from` on, newline-terminated. */
  text(from = 0): string {
    return this.rows
      .slice(from)
      .map((r) => `${r}\n`)
      .join('');
  }
}
