import { stripArchivedBlocks } from '../harness/archived-block.js';
import { toolResultLabel, toolUseLabel } from '../harness/turn-text.js';
import type { ImportedTurn, TurnRole } from './turn.js';

export { toolResultLabel, toolUseLabel };

/** One content part of a message, already reduced to text. */
export type MessagePart =
  | { kind: 'text'; text: string }
  | { kind: 'tool_use'; id: string; name: string; input: string }
  | { kind: 'tool_result'; toolUseId: string; content: string; isError: boolean };

/** A message of any supported format, reduced to parts. */
export interface BuilderMessage {
  role: 'system' | 'user' | 'assistant';
  parts: MessagePart[];
  /**
   * Assistant messages with the same key that follow each other form one turn: Claude Code
   * writes one transcript row per content block of one API message.
   */
  groupKey?: string;
}

/** One part of an open turn: text, or a tool call with its result once it arrives. */
export type OpenTurnSegment =
  | { kind: 'text'; text: string }
  | {
      kind: 'call';
      id: string;
      name: string;
      input: string;
      result: { content: string; is_error: boolean } | null;
    };

/** A turn still open (its tool calls may still be answered); persisted by the hook. */
export interface OpenTurn {
  step_id: number;
  role: TurnRole;
  group_key: string | null;
  segments: OpenTurnSegment[];
  /** A later user turn arrived while calls were unanswered: the calls were interrupted. */
  closed: boolean;
}

/** Serialisable state of a {@link ConversationBuilder} (the Claude Code hook persists it). */
export interface ConversationState {
  next_step: number;
  open: OpenTurn[];
}

function renderSegment(s: OpenTurnSegment): string {
  if (s.kind === 'text') return s.text;
  const call = `${toolUseLabel(s.name, s.id)}\n${s.input}`;
  if (s.result === null) return call;
  return `${call}\n${toolResultLabel(s.name, s.id, s.result.is_error)}\n${s.result.content}`;
}

/** Pages a harness put at the end of a user turn are archived data, never part of a new turn. */
function withoutArchivedBlocks(parts: MessagePart[]): MessagePart[] {
  const out: MessagePart[] = [];
  for (const p of parts) {
    if (p.kind !== 'text') {
      out.push(p);
      continue;
    }
    const stripped = stripArchivedBlocks(p.text);
    if (stripped.blocks.length === 0) out.push(p);
    else if (stripped.text !== '') out.push({ kind: 'text', text: stripped.text });
  }
  return out;
}

function unanswered(t: OpenTurn): boolean {
  return t.segments.some((s) => s.kind === 'call' && s.result === null);
}

/**
 * Turns a message stream into turns: one turn per user/system message, one per assistant
 * message together with the results of its tool calls (so a paged-in call always comes with its
 * output). Step ids are turn positions. A turn is emitted once it can no longer change (a later
 * turn exists and every call is answered, or a later user turn interrupted it); which turns are
 * emitted depends only on the messages seen so far, so feeding the same rows in any number of
 * chunks (the hook does, across processes) gives the same turns as one pass.
 *
 * @example
 * const b = new ConversationBuilder();
 * b.push({ role: 'user', parts: [{ kind: 'text', text: 'hi' }] });
 * const turns = b.flush(); // [{ step_id: 0, role: 'user', content: 'hi' }]
 */
export class ConversationBuilder {
  private readonly s: ConversationState;

  constructor(state?: ConversationState) {
    this.s = state ? structuredClone(state) : { next_step: 0, open: [] };
  }

  /** The step id the next new turn gets (= number of turns so far). */
  get nextStep(): number {
    return this.s.next_step;
  }

  /** A copy of the state, to persist and resume from. */
  state(): ConversationState {
    return structuredClone(this.s);
  }

  /** Adds one message; returns the turns that became final, in step order. */
  push(msg: BuilderMessage): ImportedTurn[] {
    const last = this.s.open.at(-1);
    let current: OpenTurn | null =
      msg.role === 'assistant' &&
      msg.groupKey !== undefined &&
      last !== undefined &&
      last.step_id === this.s.next_step - 1 &&
      last.role === 'assistant' &&
      last.group_key === msg.groupKey
        ? last
        : null;
    let orphans: OpenTurn | null = null;
    let startedUser = false;
    for (const part of msg.role === 'user' ? withoutArchivedBlocks(msg.parts) : msg.parts) {
      if (part.kind === 'tool_result') {
        const call = this.findCall(part.toolUseId);
        if (call) {
          call.result = { content: part.content, is_error: part.isError };
          continue;
        }
        if (!orphans) {
          orphans = this.newTurn('tool', null);
          current = null;
        }
        orphans.segments.push({
          kind: 'text',
          text: `${toolResultLabel(null, part.toolUseId, part.isError)}\n${part.content}`,
        });
        continue;
      }
      if (!current) {
        current = this.newTurn(msg.role, msg.role === 'assistant' ? (msg.groupKey ?? null) : null);
        orphans = null;
        if (msg.role === 'user') startedUser = true;
      }
      if (part.kind === 'text') current.segments.push({ kind: 'text', text: part.text });
      else
        current.segments.push({
          kind: 'call',
          id: part.id,
          name: part.name,
          input: part.input,
          result: null,
        });
    }
    if (startedUser) {
      // A new user prompt means the agent moved on: unanswered calls before it were interrupted.
      for (const t of this.s.open) if (t.step_id < this.s.next_step - 1) t.closed = true;
    }
    return this.take((t) => t.step_id < this.s.next_step - 1 && (t.closed || !unanswered(t)));
  }

  /**
   * Ends the input. `all` (end of file) emits every open turn; `complete` (the hook before a
   * compaction) emits only turns whose calls are all answered, including the last one.
   */
  flush(
    mode: 'all' | 'complete' = 'all',
    /** Calls no result can answer (an id no output can name): they do not keep a turn open. */
    unanswerable: (callId: string) => boolean = () => false,
  ): ImportedTurn[] {
    return this.take(
      (t) =>
        mode === 'all' ||
        t.closed ||
        !t.segments.some((s) => s.kind === 'call' && s.result === null && !unanswerable(s.id)),
    );
  }

  /** Step ids of the turns not emitted yet (after `flush('complete')`: those still open). */
  pending(): number[] {
    return this.s.open.map((t) => t.step_id);
  }

  private newTurn(role: TurnRole, groupKey: string | null): OpenTurn {
    const t: OpenTurn = {
      step_id: this.s.next_step++,
      role,
      group_key: groupKey,
      segments: [],
      closed: false,
    };
    this.s.open.push(t);
    return t;
  }

  private findCall(id: string): Extract<OpenTurnSegment, { kind: 'call' }> | undefined {
    for (const t of this.s.open) {
      for (const s of t.segments)
        if (s.kind === 'call' && s.id === id && s.result === null) return s;
    }
    return undefined;
  }

  private take(final: (t: OpenTurn) => boolean): ImportedTurn[] {
    const out: ImportedTurn[] = [];
    const keep: OpenTurn[] = [];
    for (const t of this.s.open) {
      if (final(t))
        out.push({
          step_id: t.step_id,
          role: t.role,
          content: t.segments.map(renderSegment).join('\n'),
        });
      else keep.push(t);
    }
    this.s.open = keep;
    return out;
  }
}
