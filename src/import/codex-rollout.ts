import { COMPACT_SUMMARY_LABEL } from './claude-code-transcript.js';
import {
  type BuilderMessage,
  ConversationBuilder,
  type MessagePart,
} from './conversation-builder.js';
import { isRecord, parseJsonLine, sourceError } from './source-error.js';
import type { ImportedTurn } from './turn.js';

/** Top-level record types of a rollout line (`{ timestamp, type, payload }`). */
export const CODEX_RECORD_TYPES: ReadonlySet<string> = new Set([
  'session_meta',
  'response_item',
  'turn_context',
  'event_msg',
  'compacted',
]);

/** Response items of the first rollouts, written bare (without the `payload` wrapper). */
const BARE_ITEMS = new Set([
  'message',
  'reasoning',
  'function_call',
  'function_call_output',
  'custom_tool_call',
  'custom_tool_call_output',
  'local_shell_call',
]);

type Fail = (problem: string) => never;

/** The text of a message's content: a string, or blocks (`input_text`, `output_text`, images). */
function contentText(content: unknown, fail: Fail): string {
  if (typeof content === 'string') return content;
  if (!Array.isArray(content)) return fail('"content" must be a string or a list of blocks');
  return content
    .map((b) => {
      if (!isRecord(b)) return fail('a content block is not an object');
      if (typeof b.text === 'string') return b.text;
      return typeof b.type === 'string' && b.type.includes('image') ? '[image]' : '';
    })
    .filter((t) => t !== '')
    .join('\n');
}

/** A tool's output: a string, or (some versions) `{ output, metadata }`. */
function outputText(output: unknown): string {
  if (typeof output === 'string') return output;
  if (isRecord(output) && typeof output.output === 'string') return output.output;
  return JSON.stringify(output ?? null);
}

const str = (v: unknown): string => (typeof v === 'string' ? v : JSON.stringify(v ?? null));

/**
 * The parts one response item adds, and who they are from; null for items that are not part of
 * the conversation (git snapshots, web search status, encrypted-only reasoning).
 */
function itemMessage(item: Record<string, unknown>, fail: Fail): BuilderMessage | null {
  const part = (p: MessagePart, role: BuilderMessage['role']): BuilderMessage => ({
    role,
    parts: [p],
  });
  switch (item.type) {
    case 'message': {
      const text = contentText(item.content, fail);
      if (item.role === 'assistant') return part({ kind: 'text', text }, 'assistant');
      if (item.role === 'user') return part({ kind: 'text', text }, 'user');
      if (item.role === 'developer' || item.role === 'system') {
        return part({ kind: 'text', text }, 'system');
      }
      return fail(
        `a message's "role" must be user, assistant, developer or system, got ${str(item.role)}`,
      );
    }
    case 'reasoning': {
      const summary = Array.isArray(item.summary) ? item.summary : [];
      const text = summary
        .map((s) => (isRecord(s) && typeof s.text === 'string' ? s.text : ''))
        .filter((t) => t !== '')
        .join('\n');
      return text === '' ? null : part({ kind: 'text', text: `[thinking]\n${text}` }, 'assistant');
    }
    case 'function_call':
    case 'custom_tool_call':
    case 'local_shell_call': {
      const id = item.call_id ?? item.id;
      if (typeof id !== 'string') return fail('a tool call without "call_id"');
      const name = typeof item.name === 'string' ? item.name : 'shell';
      const input = item.arguments ?? item.input ?? item.action;
      return part({ kind: 'tool_use', id, name, input: str(input) }, 'assistant');
    }
    case 'function_call_output':
    case 'custom_tool_call_output': {
      if (typeof item.call_id !== 'string') return fail('a tool output without "call_id"');
      const content = outputText(item.output);
      return part(
        { kind: 'tool_result', toolUseId: item.call_id, content, isError: false },
        'user',
      );
    }
    default:
      return null;
  }
}

/**
 * Parses an OpenAI Codex CLI session rollout (`~/.codex/sessions/YYYY/MM/DD/rollout-….jsonl`):
 * one `{ timestamp, type, payload }` record a line. Messages become turns; the items of one model
 * response (reasoning summary, text, tool calls) are one assistant turn, with each call's output
 * attached to it; a compaction's summary is a turn labelled `[compact summary]`. Session metadata,
 * turn context and UI events are not turns; the session id comes from `session_meta`. The first
 * rollouts (items written bare, without the wrapper) are read too.
 *
 * @example
 * parseCodexRollout('{"type":"session_meta","payload":{"id":"s1"}}\n', 'rollout.jsonl');
 * // { turns: [], sessionId: 's1' }
 */
export function parseCodexRollout(
  text: string,
  source: string,
): { turns: ImportedTurn[]; sessionId: string | null } {
  const builder = new ConversationBuilder();
  const turns: ImportedTurn[] = [];
  let sessionId: string | null = null;
  let response = 0;
  for (const [i, raw] of text.split('\n').entries()) {
    if (raw.trim() === '') continue;
    const line = i + 1;
    const fail: Fail = (problem) => {
      throw sourceError(source, line, problem);
    };
    const r = parseJsonLine(raw, source, line, 'a Codex rollout holds one JSON record per line');
    if (!isRecord(r)) fail('a rollout record must be a JSON object');
    const rec = r as Record<string, unknown>;
    const wrapped = typeof rec.type === 'string' && isRecord(rec.payload);
    const kind = wrapped ? rec.type : BARE_ITEMS.has(String(rec.type)) ? 'response_item' : null;
    const payload = (wrapped ? rec.payload : rec) as Record<string, unknown>;
    // The first rollouts open with the bare session meta: `{ id, timestamp, instructions }`.
    const meta =
      kind === 'session_meta' || (!wrapped && rec.type === undefined && 'timestamp' in rec);
    if (meta && typeof payload.id === 'string') sessionId ??= payload.id;
    if (kind === 'compacted' && typeof payload.message === 'string') {
      const summary = { kind: 'text' as const, text: COMPACT_SUMMARY_LABEL + payload.message };
      turns.push(...builder.push({ role: 'user', parts: [summary] }));
      response++;
    }
    if (kind !== 'response_item') continue;
    const msg = itemMessage(payload, fail);
    if (!msg) continue;
    // A tool output or a user message ends a model response: what follows is the next one.
    if (msg.role !== 'assistant') response++;
    turns.push(
      ...builder.push(msg.role === 'assistant' ? { ...msg, groupKey: `r${response}` } : msg),
    );
  }
  turns.push(...builder.flush());
  return { turns, sessionId };
}
