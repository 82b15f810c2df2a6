import { UsageError } from '../protocol/errors.js';
import { AIDER_CHAT_START } from './aider-history.js';
import { CODEX_RECORD_TYPES, isBareCodexMeta } from './codex-rollout.js';
import { parseJsonDocument } from './json-source.js';
import { IMPORT_FORMATS, type ImportFormat } from './turn.js';

/** Records of a JSONL file looked at before giving up on telling its format. */
const SNIFF_RECORDS = 50;

/** Keys only Claude Code transcript rows carry (every row kind has at least one). */
const CLAUDE_CODE_KEYS = ['sessionId', 'uuid', 'parentUuid', 'leafUuid', 'messageId'];

/** Content block types of the Anthropic Messages API that OpenAI's Chat Completions lacks. */
const ANTHROPIC_BLOCKS = new Set([
  'tool_use',
  'tool_result',
  'thinking',
  'redacted_thinking',
  'image',
  'document',
]);

/** Message roles and fields of OpenAI's Chat Completions that Anthropic's messages lack. */
const OPENAI_ROLES = new Set(['system', 'developer', 'tool', 'function']);
const OPENAI_BLOCKS = new Set(['image_url', 'input_audio', 'file', 'refusal']);

const isObject = (x: unknown): x is Record<string, unknown> =>
  typeof x === 'object' && x !== null && !Array.isArray(x);

/**
 * The format of a history file, told from its content, for `import` without `--format`: a
 * JSON message array (or request body with `messages`) is `openai` or `anthropic` by the roles,
 * fields and content blocks only one of them has; JSONL is `turns` (`step_id` and `role`) or
 * `claude-code` (rows with a `type` and a session or message id) or `codex` (`{ type, payload }`
 * rollout records, or the bare `{ id, timestamp, instructions }` line the first rollouts open
 * with); an object with a `history`
 * array and a `trajectory` or `info` is a SWE-agent trajectory; Markdown that starts a chat
 * with aider's `# aider chat started at` line is an aider history. A file that does not say
 * (plain user/assistant text messages read the same in both APIs) is a one-line `UsageError`
 * asking for `--format`; nothing is guessed.
 *
 * @example
 * detectImportFormat({ text: '[{"role":"tool","content":"5433"}]', source: 'chat.json' }); // 'openai'
 */
export function detectImportFormat(options: { text: string; source: string }): ImportFormat {
  const { text, source } = options;
  const doc = parseWhole(text);
  if (isSweAgentTrajectory(doc)) return 'swe-agent';
  if (doc === undefined && isAiderHistory(text)) return 'aider';
  const messages = Array.isArray(doc) ? doc : isObject(doc) ? doc.messages : undefined;
  const found = Array.isArray(messages)
    ? messagesFormat(doc, messages)
    : doc === undefined || isObject(doc)
      ? jsonlFormat(text)
      : undefined;
  if (found) return found;
  // A JSON document cut short (a truncated copy, a half-written download) is not a format to
  // ask for: say where it breaks, as the reader of any JSON format would.
  if (doc === undefined && isJsonDocumentStart(text)) parseJsonDocument(text, source);
  // Nothing to tell a format from: asking for --format would only import nothing.
  if (text.trim() === '' || (Array.isArray(messages) && messages.length === 0)) {
    throw new UsageError(`${source} has no messages: nothing to import`, { path: source });
  }
  const why = Array.isArray(messages)
    ? 'its messages read the same as OpenAI and Anthropic messages'
    : 'it is neither a message array, a JSONL transcript, rollout or turns file, an aider history nor a SWE-agent trajectory';
  throw new UsageError(
    `cannot tell the format of ${source}: ${why}; pass \`format\` (${IMPORT_FORMATS.join(', ')})`,
    { path: source, option: 'format' },
  );
}

/**
 * True when `text` opens one JSON document rather than JSONL records: it starts with `[` or `{`
 * and its first line is not a whole JSON value.
 */
function isJsonDocumentStart(text: string): boolean {
  const first = text.trimStart().split('\n', 1)[0] ?? '';
  return /^[[{]/.test(first) && parseWhole(first) === undefined;
}

function isSweAgentTrajectory(doc: unknown): boolean {
  return isObject(doc) && Array.isArray(doc.history) && ('trajectory' in doc || 'info' in doc);
}

/** An aider history opens with a chat start line (after aider's blank first line, if any). */
function isAiderHistory(text: string): boolean {
  return text.trimStart().startsWith(AIDER_CHAT_START);
}

function parseWhole(text: string): unknown {
  try {
    return JSON.parse(text);
  } catch {
    return undefined;
  }
}

function messagesFormat(doc: unknown, messages: unknown[]): ImportFormat | undefined {
  // A request body's top-level `system` is Anthropic's; OpenAI puts it among the messages.
  let anthropic = isObject(doc) && (typeof doc.system === 'string' || Array.isArray(doc.system));
  let openai = false;
  for (const m of messages) {
    if (!isObject(m)) continue;
    if (typeof m.role === 'string' && OPENAI_ROLES.has(m.role)) openai = true;
    if ('tool_calls' in m || 'function_call' in m || 'tool_call_id' in m) openai = true;
    if (!Array.isArray(m.content)) continue;
    for (const b of m.content) {
      if (!isObject(b) || typeof b.type !== 'string') continue;
      if (ANTHROPIC_BLOCKS.has(b.type)) anthropic = true;
      if (OPENAI_BLOCKS.has(b.type)) openai = true;
    }
  }
  if (anthropic === openai) return undefined;
  return anthropic ? 'anthropic' : 'openai';
}

function jsonlFormat(text: string): ImportFormat | undefined {
  let seen = 0;
  for (const line of text.split('\n')) {
    if (line.trim() === '') continue;
    if (++seen > SNIFF_RECORDS) break;
    const r = parseWhole(line);
    if (!isObject(r)) continue;
    if (typeof r.step_id === 'number' && typeof r.role === 'string') return 'turns';
    if (typeof r.type === 'string' && CLAUDE_CODE_KEYS.some((k) => k in r)) return 'claude-code';
    if (typeof r.type === 'string' && CODEX_RECORD_TYPES.has(r.type) && isObject(r.payload)) {
      return 'codex';
    }
    if (isBareCodexMeta(r)) return 'codex';
  }
  return undefined;
}
