/**
 * Builds Claude Code transcript rows (the real field layout) for tests: a user prompt, an
 * assistant message split into one row per content block, tool results, compaction rows.
 */
export class TranscriptWriter {
  private n = 0;
  private msg = 0;
  private parent: string | null = null;
  readonly rows: string[] = [];

  constructor(readonly sessionId = '0dd5e551-0000-4000-8000-00000000beef') {}

  private uuid(): string {
    this.n++;
    return `00000000-0000-4000-8000-${String(this.n).padStart(12, '0')}`;
  }

  private base(type: string, extra: Record<string, unknown>): Record<string, unknown> {
    const uuid = this.uuid();
    const row = {
      parentUuid: this.parent,
      isSidechain: false,
      userType: 'external',
      cwd: '/home/dev/app',
      sessionId: this.sessionId,
      version: '2.1.39',
      gitBranch: 'main',
      type,
      uuid,
      timestamp: '2026-03-01T10:00:00.000Z',
      ...extra,
    };
    this.parent = uuid;
    return row;
  }

  private push(row: Record<string, unknown>): this {
    this.rows.push(JSON.stringify(row));
    return this;
  }

  /** A user prompt row. */
  user(text: string): this {
    return this.push(this.base('user', { message: { role: 'user', content: text } }));
  }

  /** One assistant message: a text row and one row per tool call, then one result row per call. */
  assistant(
    text: string,
    calls: { name: string; input: unknown; result: string; isError?: boolean }[] = [],
  ): this {
    this.msg++;
    const id = `msg_${String(this.msg).padStart(8, '0')}`;
    const message = (content: unknown[]) => ({
      model: 'claude-opus-4-6',
      id,
      type: 'message',
      role: 'assistant',
      content,
      stop_reason: null,
      stop_sequence: null,
      usage: { input_tokens: 1, output_tokens: 1 },
    });
    if (text)
      this.push(
        this.base('assistant', {
          message: message([{ type: 'text', text }]),
          requestId: `req_${id}`,
        }),
      );
    const ids = calls.map((c, i) => {
      const toolId = `toolu_${id}_${i}`;
      this.push(
        this.base('assistant', {
          message: message([{ type: 'tool_use', id: toolId, name: c.name, input: c.input }]),
          requestId: `req_${id}`,
        }),
      );
      return toolId;
    });
    calls.forEach((c, i) => {
      this.push(
        this.base('user', {
          message: {
            role: 'user',
            content: [
              {
                tool_use_id: ids[i],
                type: 'tool_result',
                content: c.result,
                ...(c.isError ? { is_error: true } : {}),
              },
            ],
          },
          toolUseResult: c.result,
        }),
      );
    });
    return this;
  }

  /** A compaction: the boundary row and the summary row Claude Code writes. */
  compact(summary: string): this {
    this.push(
      this.base('system', {
        subtype: 'compact_boundary',
        content: 'Conversation compacted',
        isMeta: false,
        level: 'info',
        compactMetadata: { trigger: 'auto', preTokens: 150000 },
      }),
    );
    return this.push(
      this.base('user', {
        message: {
          role: 'user',
          content: `This session is being continued from a previous conversation. ${summary}`,
        },
        isVisibleInTranscriptOnly: true,
        isCompactSummary: true,
      }),
    );
  }

  /** A progress row (not a turn). */
  progress(): this {
    return this.push(
      this.base('progress', {
        data: { type: 'hook_progress' },
        toolUseID: 'x',
        parentToolUseID: 'x',
      }),
    );
  }

  /** The transcript text (newline-terminated lines). */
  text(from = 0, to = this.rows.length): string {
    return this.rows
      .slice(from, to)
      .map((r) => `${r}\n`)
      .join('');
  }
}
