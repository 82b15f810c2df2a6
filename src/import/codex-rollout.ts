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

/**
 * The session meta the first rollouts open with, bare: `{ id, timestamp, instructions }` (some
 * versions add `cwd`, `git`, …), where later ones write a `session_meta` record.
 */
export function isBareCodexMeta(r: Record<string, unknown>): boolean {
  return (
    r.type === undefined &&
    typeof r.id === 'string' &&
    typeof r.timestamp === 'string' &&
    'instructions' in r
  );
}

type Fail = (problem: string) => never;

/** The text of content blocks (`input_text`, `output_text`, images): image data is no text. */
function blocksText(blocks: unknown[], fail: Fail): string {
  return blocks
    .map((b) => {
      if (!isRecord(b)) return fail('a content block is not an object');
      if (typeof b.text === 'string') return b.text;
      return typeof b.type === 'string' && b.type.includes('image') ? '[image]' : '';
    })
    .filter((t) => t !== '')
    .join('\n');
}

/** The text of a message's content: a string, or blocks. */
function contentText(content: unknown, fail: Fail): string {
  if (typeof content === 'string') return content;
  if (!Array.isArray(content)) return fail('"content" must be a string or a list of blocks');
  return blocksText(content, fail);
}

/**
 * A tool's output: a string (a shell's is `Exit code: …` text, or in older versions JSON text
 * `{"output": …, "metadata": …}`, kept as written), or content items when a tool returned an
 * image (`input_text`, `input_image` with the image inline as a data URL).
 */
function outputText(output: unknown, fail: Fail): string {
  if (typeof output === 'string') return output;
  if (Array.isArray(output)) return blocksText(output, fail);
  return JSON.stringify(output ?? null);
}

const str = (v: unknown): string => (typeof v === 'string' ? v : JSON.stringify(v ?? null));

/** The text of each `{ text }` entry of the lists given (entries of other shapes have none). */
const texts = (...lists: unknown[]): string[] =>
  lists
    .flatMap((l) => (Array.isArray(l) ? l : []))
    .map((e) => (isRecord(e) && typeof e.text === 'string' ? e.text : ''))
    .filter((t) => t !== '');

const part = (p: MessagePart, role: BuilderMessage['role']): BuilderMessage => ({
  role,
  parts: [p],
});

/**
 * A reasoning item's readable text: its summary, and the raw reasoning some models write in
 * `content` (`reasoning_text`); null when only `encrypted_content` is there.
 */
function reasoningMessage(item: Record<string, unknown>): BuilderMessage | null {
  const text = texts(item.summary, item.content).join('\n');
  return text === '' ? null : part({ kind: 'text', text: `[thinking]\n${text}` }, 'assistant');
}

/**
 * A web search the model ran: what it searched or opened (the `action`). The results are not
 * in the rollout; a call without an action says nothing.
 */
function webSearchMessage(item: Record<string, unknown>): BuilderMessage | null {
  if (!isRecord(item.action)) return null;
  return part({ kind: 'text', text: `[web_search]\n${JSON.stringify(item.action)}` }, 'assistant');
}

/**
 * An image the model generated: what it drew, in the prompt it revised (the image itself,
 * `result`, is base64 data, not text). A call without a prompt says nothing.
 */
function imageGenerationMessage(item: Record<string, unknown>): BuilderMessage | null {
  const prompt = typeof item.revised_prompt === 'string' ? item.revised_prompt : '';
  if (prompt === '') return null;
  return part({ kind: 'text', text: `[image_generation]\n${prompt}` }, 'assistant');
}

/**
 * The parts one response item adds, and who they are from; null for items that are not part of
 * the conversation (git snapshots, encrypted compactions, encrypted-only reasoning) and for item
 * types this reader does not know (newer versions add some: tool search).
 */
/**
 * Codex's `LocalShellCall` has both ids optional (Codex reports an error for a call with
 * neither, and no output can answer it): the command still ran and is kept, under an id of its
 * own line that no output can name. Other calls without `call_id` are malformed.
 */
function unpairedShellCallId(item: Record<string, unknown>, line: number): string | undefined {
  return item.type === 'local_shell_call' ? `${UNPAIRED_SHELL_CALL}${line}` : undefined;
}

const UNPAIRED_SHELL_CALL = 'local_shell_call@line-';

function itemMessage(
  item: Record<string, unknown>,
  fail: Fail,
  line: number,
): BuilderMessage | null {
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
    case 'reasoning':
      return reasoningMessage(item);
    case 'web_search_call':
      return webSearchMessage(item);
    case 'image_generation_call':
      return imageGenerationMessage(item);
    case 'function_call':
    case 'custom_tool_call':
    case 'local_shell_call': {
      const id = item.call_id ?? item.id ?? unpairedShellCallId(item, line);
      if (typeof id !== 'string') return fail('a tool call without "call_id"');
      const name = typeof item.name === 'string' ? item.name : 'shell';
      const input = item.arguments ?? item.input ?? item.action;
      return part({ kind: 'tool_use', id, name, input: str(input) }, 'assistant');
    }
    case 'function_call_output':
    case 'custom_tool_call_output': {
      if (typeof item.call_id !== 'string') return fail('a tool output without "call_id"');
      const content = outputText(item.output, fail);
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
 * response (reasoning, text, tool calls, web searches) are one assistant turn, with each call's
 * output attached to it; a compaction's summary is a turn labelled `[compact summary]` (a remote
 * compaction's is encrypted: no turn). Session metadata, turn context, UI events and record types
 * this reader does not know are not turns; the session id comes from `session_meta`. The first
 * rollouts (items written bare, without the wrapper) are read too.
 *
 * @example
 * parseCodexRollout('{"type":"session_meta","payload":{"id":"s1"}}\n', 'rollout.jsonl');
 * // { turns: [], sessionId: 's1', open: [], skipped: {} }
 */
export function parseCodexRollout(
  text: string,
  source: string,
): {
  turns: ImportedTurn[];
  sessionId: string | null;
  open: number[];
  /** Items of a type this reader does not know, by type: left out, and reported. */
  skipped: Record<string, number>;
} {
  const builder = new ConversationBuilder();
  const skipped: Record<string, number> = {};
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
    const meta = kind === 'session_meta' || (!wrapped && isBareCodexMeta(rec));
    if (meta && typeof payload.id === 'string') sessionId ??= payload.id;
    // A remote compaction's summary is encrypted (in `replacement_history`): `message` is empty.
    if (kind === 'compacted' && typeof payload.message === 'string' && payload.message !== '') {
      const summary = { kind: 'text' as const, text: COMPACT_SUMMARY_LABEL + payload.message };
      turns.push(...builder.push({ role: 'user', parts: [summary] }));
      response++;
    }
    if (kind !== 'response_item') continue;
    const msg = itemMessage(payload, fail, line);
    if (!msg) {
      const type = String(payload.type);
      if (!READ_ITEMS.has(type) && !IGNORED_ITEMS.has(type))
        skipped[type] = (skipped[type] ?? 0) + 1;
      continue;
    }
    // A tool output or a user message ends a model response: what follows is the next one.
    if (msg.role !== 'assistant') response++;
    turns.push(
      ...builder.push(msg.role === 'assistant' ? { ...msg, groupKey: `r${response}` } : msg),
    );
  }
  // A last turn still open (a call without its output) is left out: see `ParsedTranscript.open`.
  turns.push(...builder.flush('complete', (id) => id.startsWith(UNPAIRED_SHELL_CALL)));
  return { turns, sessionId, open: builder.pending(), skipped };
}

/** Item types {@link itemMessage} reads. */
const READ_ITEMS = new Set([
  'message',
  'reasoning',
  'web_search_call',
  'image_generation_call',
  'function_call',
  'custom_tool_call',
  'local_shell_call',
  'function_call_output',
  'custom_tool_call_output',
]);

/** Item types that hold no conversation (a snapshot of the work tree for undo). */
const IGNORED_ITEMS = new Set(['ghost_snapshot']);
