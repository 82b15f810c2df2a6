import type { HistoryRecord } from '../../harness/messages.js';
import { modelCalls } from '../../harness/per-call.js';
import { toolUseLabel } from '../../import/conversation-builder.js';

/** An assistant turn's text split back into text and tool calls (the importers' rendering). */
type Segment =
  | { kind: 'text'; text: string }
  | { kind: 'call'; name: string; id: string; input: string };

const CALL_RE = /^\[tool_use: (.+) id=(\S+)\]$/gm;
const RESULT_RE = /^\[tool_result: (.+) id=(\S+?)( error)?\]\n/;

function render(segments: Segment[]): string {
  return segments
    .map((s) => (s.kind === 'text' ? s.text : `${toolUseLabel(s.name, s.id)}\n${s.input}`))
    .join('\n');
}

/** The end of the JSON value that starts at `from` (a line boundary), or -1. */
function jsonEnd(text: string, from: number): number {
  for (let end = text.indexOf('\n', from); ; end = text.indexOf('\n', end + 1)) {
    const stop = end === -1 ? text.length : end;
    const candidate = text.slice(from, stop);
    try {
      if (JSON.stringify(JSON.parse(candidate), null, 1) === candidate) return stop;
    } catch {
      // not complete yet
    }
    if (end === -1) return -1;
  }
}

/**
 * Splits an assistant turn rendered the importers' way (`text`, `[tool_use: NAME id=ID]` then
 * the input as JSON, joined by newlines) back into segments; null when the text does not
 * re-render to exactly itself that way.
 */
export function splitAssistant(text: string): Segment[] | null {
  const out: Segment[] = [];
  let pos = 0;
  CALL_RE.lastIndex = 0;
  for (let m = CALL_RE.exec(text); m; m = CALL_RE.exec(text)) {
    if (m.index < pos) continue;
    if (m.index > pos) out.push({ kind: 'text', text: text.slice(pos, m.index - 1) });
    const start = m.index + m[0].length + 1;
    const end = start <= text.length ? jsonEnd(text, start) : -1;
    if (end === -1) return null;
    out.push({ kind: 'call', name: m[1]!, id: m[2]!, input: text.slice(start, end) });
    if (end === text.length) {
      pos = end + 1;
      break;
    }
    pos = end + 1;
    CALL_RE.lastIndex = pos;
  }
  if (pos <= text.length) out.push({ kind: 'text', text: text.slice(pos) });
  return render(out) === text ? out : null;
}

/** One model call of a recorded history: where it happens, and the body a client sends. */
export interface RecordedCall {
  /** History position of the call: the request carries records `[0, at)`. */
  at: number;
  body: Record<string, unknown>;
}

type ApiMessage = Record<string, unknown>;

/** API messages of a history, and for each record how many messages include it. */
interface Conversation {
  messages: ApiMessage[];
  through: number[];
}

function calls(
  records: readonly HistoryRecord[],
  conv: Conversation,
  base: Record<string, unknown>,
): RecordedCall[] {
  return modelCalls(records).map((at) => ({
    at,
    body: { ...base, messages: conv.messages.slice(0, conv.through[at - 1]!) },
  }));
}

/** A tool row that answers a call of the assistant turn before it: its call id and content. */
function answer(
  record: HistoryRecord,
  open: Map<string, string>,
): { id: string; content: string; isError: boolean } | null {
  const m = RESULT_RE.exec(record.content);
  if (record.role !== 'tool' || !m || open.get(m[2]!) !== m[1]) return null;
  open.delete(m[2]!);
  return { id: m[2]!, content: record.content.slice(m[0].length), isError: m[3] !== undefined };
}

type Answer = NonNullable<ReturnType<typeof answer>>;

/** How one API writes the rows of a recorded history as messages. */
interface Dialect {
  /** Writes a tool row that answers an open call; false to write it as a plain message. */
  toolResult(a: Answer, messages: ApiMessage[]): boolean;
  /** The message of an assistant row; the calls it writes as tool calls go into `open`. */
  assistant(text: string, open: Map<string, string>): ApiMessage;
}

function conversation(records: readonly HistoryRecord[], dialect: Dialect): Conversation {
  const messages: ApiMessage[] = [];
  const through: number[] = [];
  let open = new Map<string, string>();
  for (const r of records) {
    const a = answer(r, open);
    const written = a !== null && dialect.toolResult(a, messages);
    if (!written && r.role === 'assistant') {
      open = new Map();
      messages.push(dialect.assistant(r.content, open));
    } else if (!written) {
      messages.push({ role: r.role === 'system' ? 'system' : 'user', content: r.content });
    }
    through.push(messages.length);
  }
  return { messages, through };
}

/** Anthropic: `tool_result` blocks, consecutive ones in one user message; calls `tool_use` blocks. */
const ANTHROPIC: Dialect = {
  toolResult(a, messages) {
    const block = {
      type: 'tool_result',
      tool_use_id: a.id,
      content: a.content,
      ...(a.isError ? { is_error: true } : {}),
    };
    const last = messages.at(-1);
    if (last?.role === 'user' && Array.isArray(last.content)) last.content.push(block);
    else messages.push({ role: 'user', content: [block] });
    return true;
  },
  assistant(text, open) {
    const content = (splitAssistant(text) ?? [{ kind: 'text', text }]).map((s) => {
      if (s.kind === 'text') return { type: 'text', text: s.text };
      open.set(s.id, s.name);
      return { type: 'tool_use', id: s.id, name: s.name, input: JSON.parse(s.input) as unknown };
    });
    return { role: 'assistant', content };
  },
};

/** OpenAI Chat Completions: `tool` messages (no error flag: a failed one stays text), `tool_calls`. */
const OPENAI: Dialect = {
  toolResult(a, messages) {
    if (a.isError) return false;
    messages.push({ role: 'tool', tool_call_id: a.id, content: a.content });
    return true;
  },
  assistant(text, open) {
    const segments = splitAssistant(text);
    const callsAt = segments?.findIndex((s) => s.kind === 'call') ?? -1;
    const tail = callsAt === -1 ? [] : segments!.slice(callsAt);
    if (!segments || callsAt === -1 || !tail.every((s) => s.kind === 'call') || callsAt > 1) {
      return { role: 'assistant', content: text };
    }
    return {
      role: 'assistant',
      content: callsAt === 1 ? (segments[0] as { text: string }).text : null,
      tool_calls: tail.map((s) => {
        const c = s as Extract<Segment, { kind: 'call' }>;
        open.set(c.id, c.name);
        return { id: c.id, type: 'function', function: { name: c.name, arguments: c.input } };
      }),
    };
  },
};

/**
 * The Anthropic Messages requests a client sends for a recorded history (the `../shared/data`
 * turns format), one per model call: tool calls written the importers' way become `tool_use`
 * blocks, the tool rows that answer them `tool_result` blocks (with `is_error`), consecutive
 * results one user message; any other row is a message with its text. The proxy's neutral
 * history of such a request is the recorded history again, row for row, wherever the rows
 * follow that format. Used by the benchmark and the tests to drive the proxy.
 *
 * @example
 * for (const call of anthropicRequests(records, { model: 'claude-sonnet-4-5', max_tokens: 1024 })) await send(call.body);
 */
export function anthropicRequests(
  records: readonly HistoryRecord[],
  base: Record<string, unknown>,
): RecordedCall[] {
  return calls(records, conversation(records, ANTHROPIC), base);
}

/**
 * The OpenAI Chat Completions requests a client sends for a recorded history, one per model
 * call: an assistant row whose tool calls follow its text becomes `content` plus `tool_calls`
 * (arguments verbatim), the rows that answer them `tool` messages; any other row a message with
 * its text (a failed tool result too: Chat Completions has no error flag).
 *
 * @example
 * const calls = openAiRequests(records, { model: 'gpt-4.1' });
 */
export function openAiRequests(
  records: readonly HistoryRecord[],
  base: Record<string, unknown>,
): RecordedCall[] {
  return calls(records, conversation(records, OPENAI), base);
}
