import { z } from 'zod';
import { UsageError } from '../protocol/errors.js';

/**
 * One tool invocation requested by the assistant. `input` is any JSON value.
 *
 * @example
 * const call: ToolCall = { id: 'c1', name: 'bash', input: { command: 'npm test' } };
 */
export interface ToolCall {
  id: string;
  name: string;
  input: unknown;
}

/** A system instruction. System messages are L3: pinned, never folded, never dropped. */
export interface SystemMessage {
  role: 'system';
  content: string;
  timestamp?: string;
}

/** A user turn. */
export interface UserMessage {
  role: 'user';
  content: string;
  timestamp?: string;
}

/** An assistant turn: text plus the tool calls it asked for. */
export interface AssistantMessage {
  role: 'assistant';
  content: string;
  toolCalls?: ToolCall[];
  timestamp?: string;
}

/**
 * The result of a tool call. `toolCallId` ties it to its call; `source` names what it shows
 * (e.g. `file:src/a.ts`) so that only the latest artifact per source is kept verbatim.
 */
export interface ToolMessage {
  role: 'tool';
  content: string;
  toolCallId?: string;
  toolName?: string;
  isError?: boolean;
  exitCode?: number;
  source?: string;
  timestamp?: string;
}

/**
 * The neutral message model every adapter converts to and from. A tool call and its result
 * always fold, move and drop together (they belong to the same turn, see `groupTurns`).
 *
 * @example
 * const history: Message[] = [
 *   { role: 'user', content: 'run the tests' },
 *   { role: 'assistant', content: '', toolCalls: [{ id: 'c1', name: 'bash', input: { command: 'npm test' } }] },
 *   { role: 'tool', toolCallId: 'c1', toolName: 'bash', content: '3 passed', exitCode: 0 },
 * ];
 */
export type Message = SystemMessage | UserMessage | AssistantMessage | ToolMessage;

/** The four roles of the neutral model. */
export type Role = Message['role'];

/** A message fixed in the history: its position (`stepId`) and its time never change. */
export type HistoryMessage = Message & { stepId: number; timestamp: string };

/**
 * A history message as one JSON line of `history.jsonl`: the `../shared/data` turns format
 * (`step_id`, `role`, `content`) plus optional snake_case fields.
 */
export interface HistoryRecord {
  step_id: number;
  role: Role;
  content: string;
  timestamp?: string;
  tool_calls?: { id: string; name: string; input: unknown }[];
  tool_call_id?: string;
  tool_name?: string;
  is_error?: boolean;
  exit_code?: number;
  source?: string;
}

/** RFC 3339 date-time, as JSON Schema's `date-time` format accepts it. */
const DATE_TIME_RE =
  /^(\d{4})-(\d{2})-(\d{2})[Tt ](\d{2}):(\d{2}):(\d{2})(?:\.\d+)?(?:[Zz]|[+-](\d{2}):(\d{2}))$/;

/**
 * True when `s` is an RFC 3339 date-time whose fields are in range (month 1–12, a day of that
 * month, hour ≤ 23, minute ≤ 59, second ≤ 60, offset ≤ 23:59): the record that carries it must
 * validate against `folded_step.schema.json`, and a pattern alone passes `2025-13-45T99:99:99Z`.
 */
function isDateTime(s: string): boolean {
  const m = DATE_TIME_RE.exec(s);
  if (!m) return false;
  const [y, mo, d, h, mi, se, oh, om] = m.slice(1).map((x) => Number(x ?? 0)) as number[];
  const leap = y! % 4 === 0 && (y! % 100 !== 0 || y! % 400 === 0);
  const days = [31, leap ? 29 : 28, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31][mo! - 1];
  return (
    days !== undefined &&
    d! >= 1 &&
    d! <= days &&
    h! <= 23 &&
    mi! <= 59 &&
    se! <= 60 &&
    oh! <= 23 &&
    om! <= 59
  );
}

const timestamp = z.string().refine(isDateTime, 'must be an RFC 3339 date-time');
/** True when `v` has a JSON text, so the log can hold it and give it back (no undefined, cycle or BigInt). */
function isJsonValue(v: unknown): boolean {
  try {
    return JSON.stringify(v) !== undefined;
  } catch {
    return false;
  }
}

const toolCall = z.object({
  id: z.string().min(1),
  name: z.string().min(1),
  input: z
    .unknown()
    .refine(
      isJsonValue,
      'must be a JSON value (undefined, a cycle or a BigInt cannot be recorded)',
    ),
});

const messageSchema = z.discriminatedUnion('role', [
  z.object({ role: z.literal('system'), content: z.string(), timestamp: timestamp.optional() }),
  z.object({ role: z.literal('user'), content: z.string(), timestamp: timestamp.optional() }),
  z.object({
    role: z.literal('assistant'),
    content: z.string(),
    toolCalls: z.array(toolCall).optional(),
    timestamp: timestamp.optional(),
  }),
  z.object({
    role: z.literal('tool'),
    content: z.string(),
    toolCallId: z.string().min(1).optional(),
    toolName: z.string().min(1).optional(),
    isError: z.boolean().optional(),
    exitCode: z.number().int().optional(),
    source: z.string().min(1).optional(),
    timestamp: timestamp.optional(),
  }),
]);

const recordSchema = z.object({
  step_id: z.number().int().nonnegative(),
  role: z.enum(['system', 'user', 'assistant', 'tool']),
  content: z.string(),
  timestamp: timestamp.optional(),
  tool_calls: z.array(toolCall).optional(),
  tool_call_id: z.string().min(1).optional(),
  tool_name: z.string().min(1).optional(),
  is_error: z.boolean().optional(),
  exit_code: z.number().int().optional(),
  source: z.string().min(1).optional(),
});

function describeIssue(error: z.ZodError): string {
  const issue = error.issues[0];
  const where = issue?.path.length ? issue.path.join('.') : '(root)';
  return `${where}: ${issue?.message}`;
}

/**
 * Validates one message at the boundary. Throws a one-line {@link UsageError} naming `where`.
 *
 * @example
 * parseMessage({ role: 'user', content: 'hi' }, 'message 0'); // { role: 'user', content: 'hi' }
 */
export function parseMessage(value: unknown, where: string): Message {
  const r = messageSchema.safeParse(value);
  if (!r.success) throw new UsageError(`${where}: invalid message: ${describeIssue(r.error)}`);
  const m = r.data as Message;
  // Drop keys that are present but undefined so stored records stay minimal and stable.
  return JSON.parse(JSON.stringify(m)) as Message;
}

/**
 * Validates one `history.jsonl` / turns-file record. Throws a one-line {@link UsageError}.
 *
 * @example
 * parseHistoryRecord({ step_id: 0, role: 'user', content: 'hi' }, 'line 1');
 */
export function parseHistoryRecord(value: unknown, where: string): HistoryRecord {
  const r = recordSchema.safeParse(value);
  if (!r.success) {
    throw new UsageError(`${where}: expected {step_id, role, content}: ${describeIssue(r.error)}`);
  }
  return JSON.parse(JSON.stringify(r.data)) as HistoryRecord;
}

/**
 * The neutral message of a record (its `step_id` and `timestamp` kept aside).
 *
 * @example
 * recordToMessage({ step_id: 3, role: 'tool', content: 'ok', exit_code: 0 });
 * // { role: 'tool', content: 'ok', exitCode: 0 }
 */
export function recordToMessage(r: HistoryRecord): Message {
  switch (r.role) {
    case 'system':
    case 'user':
      return {
        role: r.role,
        content: r.content,
        ...(r.timestamp ? { timestamp: r.timestamp } : {}),
      };
    case 'assistant':
      return {
        role: 'assistant',
        content: r.content,
        ...(r.tool_calls ? { toolCalls: r.tool_calls } : {}),
        ...(r.timestamp ? { timestamp: r.timestamp } : {}),
      };
    case 'tool':
      return JSON.parse(
        JSON.stringify({
          role: 'tool',
          content: r.content,
          toolCallId: r.tool_call_id,
          toolName: r.tool_name,
          isError: r.is_error,
          exitCode: r.exit_code,
          source: r.source,
          timestamp: r.timestamp,
        }),
      ) as ToolMessage;
  }
}

/**
 * The record form of a history message, for `history.jsonl`.
 *
 * @example
 * messageToRecord({ role: 'user', content: 'hi', stepId: 0, timestamp: '2025-01-01T00:00:00Z' });
 */
export function messageToRecord(m: HistoryMessage): HistoryRecord {
  const base = { step_id: m.stepId, role: m.role, content: m.content, timestamp: m.timestamp };
  if (m.role === 'assistant') {
    return m.toolCalls ? { ...base, tool_calls: m.toolCalls } : base;
  }
  if (m.role === 'tool') {
    return JSON.parse(
      JSON.stringify({
        ...base,
        tool_call_id: m.toolCallId,
        tool_name: m.toolName,
        is_error: m.isError,
        exit_code: m.exitCode,
        source: m.source,
      }),
    ) as HistoryRecord;
  }
  return base;
}

/** Strips `stepId` (and optionally `timestamp`) from a history message: what the model sees. */
export function toPlainMessage(m: HistoryMessage): Message {
  const { stepId: _s, timestamp: _t, ...rest } = m;
  return rest as Message;
}
