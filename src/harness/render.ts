import { compareCodePoints } from '../protocol/canonical-json.js';
import { setOwnEntry } from '../protocol/own-entry.js';
import type { Message } from './messages.js';

/**
 * JSON with object keys sorted by code point at every depth (floats allowed, unlike the
 * hashing form). Used wherever a tool input is rendered, so the bytes never depend on the
 * order a caller built the object in.
 *
 * @example
 * stableJson({ b: 1.5, a: [true] }); // '{"a":[true],"b":1.5}'
 */
export function stableJson(value: unknown): string {
  return JSON.stringify(sortKeys(value)) ?? 'null';
}

function sortKeys(value: unknown): unknown {
  if (Array.isArray(value)) return value.map(sortKeys);
  if (value !== null && typeof value === 'object') {
    const obj = value as Record<string, unknown>;
    const out: Record<string, unknown> = {};
    for (const k of Object.keys(obj).sort(compareCodePoints)) setOwnEntry(out, k, sortKeys(obj[k]));
    return out;
  }
  return value;
}

/** The header line of a message: `[user]`, `[tool_result bash id=c1 exit=0]`, ... */
export function messageHeader(m: Message): string {
  if (m.role !== 'tool') return `[${m.role}]`;
  let h = '[tool_result';
  if (m.toolName) h += ` ${m.toolName}`;
  if (m.toolCallId) h += ` id=${m.toolCallId}`;
  if (m.exitCode !== undefined) h += ` exit=${m.exitCode}`;
  if (m.isError) h += ' error';
  return `${h}]`;
}

/** The body of a message: its text, then each tool call as a header line and its JSON input. */
export function messageBody(m: Message): string {
  let body = m.content;
  if (m.role === 'assistant' && m.toolCalls) {
    for (const c of m.toolCalls)
      body += `\n[tool_call ${c.name} id=${c.id}]\n${stableJson(c.input)}`;
  }
  return body;
}

/**
 * The text form of a message in a rendered prompt: header line, body, blank line. Every
 * rendering starts with `[` and ends with a newline, so the tokens of a rendered prompt are
 * exactly the sum of the tokens of its parts (BPE pre-tokens never span such a boundary).
 *
 * @example
 * renderMessage({ role: 'user', content: 'hi' }); // '[user]\nhi\n\n'
 */
export function renderMessage(m: Message): string {
  return `${messageHeader(m)}\n${messageBody(m)}\n\n`;
}

/**
 * Renders a message list as one text: the prompt as it would be sent, in a vendor-neutral form.
 *
 * @example
 * renderMessages([{ role: 'system', content: 'be brief' }, { role: 'user', content: 'hi' }]);
 */
export function renderMessages(messages: readonly Message[]): string {
  let out = '';
  for (const m of messages) out += renderMessage(m);
  return out;
}
