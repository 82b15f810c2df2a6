import { sortedUnique } from '../protocol/canonical-json.js';
import type { FoldedStep } from '../protocol/types.js';

/** Longest summary a folded-step record may carry, in code points (folded_step.schema.json). */
export const MAX_SUMMARY_CHARS = 280;

/**
 * What the summariser reads: any message-like object. The neutral `Message`, a `Turn`'s
 * messages and a `../shared/data` turns line (`{ step_id, role, content }`) all fit.
 */
export interface SummaryMessage {
  role: string;
  content: string;
  toolCalls?: readonly { name: string; input: unknown }[];
  toolName?: string;
  isError?: boolean;
  exitCode?: number;
}

/** Deterministic facts about a turn, from which the summary and the record are built. */
export interface TurnFacts {
  /** At most {@link MAX_SUMMARY_CHARS} code points. */
  summary: string;
  role: string;
  first_line: string;
  /** In order of first appearance. */
  files: string[];
  commands: string[];
  errors: string[];
  /** Last exit status seen in the turn's tool output, if any. */
  exit_status: number | null;
  tool_calls: number;
  status: FoldedStep['status'];
  action_type: NonNullable<FoldedStep['action_type']>;
  /** Files sorted by code point: the record's `target_files`. */
  target_files: string[];
}

const FILE_EXTENSIONS =
  'tsx?|jsx?|mjs|cjs|json|jsonl|md|mdx|py|pyi|rb|go|rs|java|kt|cs|c|h|cc|cpp|hpp|ex|exs|heex|eex|erl|sh|bash|zsh|ya?ml|toml|ini|cfg|conf|lock|sql|html?|css|scss|vue|svelte|txt|log|xml|gradle|swift|php|lua|dart|scala|env|csv|proto|tf';
// A path with a directory part and any extension, or a bare name with a known extension.
const FILE_RE = new RegExp(
  `(?<![\\w/.:@-])(?:~?\\.{0,2}/)?(?:[\\w@.-]+/)+[\\w@-][\\w@.-]*\\.[A-Za-z][A-Za-z0-9]{0,9}(?![\\w/])` +
    `|(?<![\\w/.:@-])[\\w@-][\\w@.-]*\\.(?:${FILE_EXTENSIONS})(?![\\w/])`,
  'g',
);
const URL_RE = /\b[a-z][a-z0-9+.-]*:\/\/\S+/gi;
const PATH_KEYS = ['file_path', 'path', 'file', 'filename', 'notebook_path', 'target_file'];

const ERROR_RE =
  /\b[A-Z][A-Za-z0-9]*(?:Error|Exception)\b|\bTraceback\b|\bFATAL\b|\bPANIC\b|\bpanic:|\bHTTP\s[45]\d\d\b|\bError(?=:)|\bcommand not found\b|\bnpm ERR!|\berror TS\d{4}\b|\b\d+ (?:failed|failing|failures?)\b/g;
const EXIT_RE =
  /\b(?:exit(?:ed)?(?: with)?(?: code| status)?|exit_code|returned non-zero exit status)[:=]?\s*(-?\d+)\b/gi;

const JSON_COMMAND_RE = /"(?:command|cmd)"\s*:\s*("(?:[^"\\\n]|\\.)*")/g;
const SHELL_PROMPT_RE = /^\s*\$\s+(\S.*)$/gm;
const BASH_CALL_RE = /\bBash\(([^)\n]+)\)/g;
const TOOL_NAME_TEXT_RE = /\[tool_use: (\w+)|⏺ (\w+)\(/g;

const EDIT_TOOL_RE = /edit|write|patch|apply|replace|create|update|insert/i;
const READ_TOOL_RE = /read|view|grep|glob|search|find|^ls$|list|open|cat|fetch|explore/i;
const VERIFY_RE =
  /\b(?:test|tests|vitest|jest|pytest|mocha|tsc|lint|eslint|biome|credo|check|ruff|mypy|clippy|typecheck)\b/;
const REFACTOR_RE = /\brefactor(?:ed|ing|s)?\b|\brenam(?:e|ed|ing)\b/i;
const DIFF_RE = /^<<<<<<< SEARCH$|^\+\+\+ |^@@ -\d/m;

/** Replaces lone surrogates (which no hash or JSON writer accepts) with U+FFFD. */
export function wellFormed(text: string): string {
  return text.replace(
    /[\uD800-\uDBFF](?![\uDC00-\uDFFF])|(?<![\uD800-\uDBFF])[\uDC00-\uDFFF]/g,
    '\uFFFD',
  );
}

/**
 * The text in at most `max` code points, cut at a word boundary. Never inside a word: a token
 * cut in two (a secret among them) no longer matches the redactor's patterns, and its first
 * part would reach the store (`export GITHUB_TOKEN=ghp_u8jz…`).
 */
function cut(text: string, max: number): string {
  const cps = Array.from(text);
  if (cps.length <= max) return text;
  let end = max - 1;
  while (end > 0 && !/\s/.test(cps[end]!)) end--;
  return `${cps.slice(0, end).join('').trimEnd()}…`;
}

function pushUnique(list: string[], value: string): void {
  if (value && !list.includes(value)) list.push(value);
}

function filesOf(text: string, out: string[]): void {
  const clean = text.replace(URL_RE, ' ');
  for (const m of clean.matchAll(FILE_RE)) pushUnique(out, m[0]);
}

function commandsOf(text: string, out: string[]): void {
  for (const m of text.matchAll(JSON_COMMAND_RE)) {
    try {
      pushUnique(out, firstLine(JSON.parse(m[1]!) as string));
    } catch {
      // Not a JSON string after all: nothing to record.
    }
  }
  for (const m of text.matchAll(SHELL_PROMPT_RE)) pushUnique(out, firstLine(m[1]!));
  for (const m of text.matchAll(BASH_CALL_RE)) pushUnique(out, firstLine(m[1]!));
}

function firstLine(text: string): string {
  for (const line of text.split('\n')) {
    const t = line.trim();
    if (t) return t;
  }
  return '';
}

function inputFields(input: unknown): Record<string, unknown> {
  return input !== null && typeof input === 'object' && !Array.isArray(input)
    ? (input as Record<string, unknown>)
    : {};
}

// Lines that carry no meaning of their own: markers, fences, rules, box drawing.
const NOISE_LINE_RE =
  /^(?:\[(?:thinking|tool_use|tool_result|console|system)\b[^\]]*\]|```\w*|[-=_*#~`|+]{3,})$|^[{}[\]]|^"[\w-]+"\s*:/;
const LEADING_GLYPHS_RE = /^[\s⏺⎿●○•*#>|-]+/u;

function meaningfulLine(text: string): string {
  for (const raw of text.split('\n')) {
    const line = raw.replace(LEADING_GLYPHS_RE, '').trim();
    if (!line || NOISE_LINE_RE.test(line)) continue;
    if (!/[\p{L}\p{N}]/u.test(line)) continue;
    return line.replace(/\s+/g, ' ');
  }
  return '';
}

function exitOf(m: SummaryMessage): number | null {
  if (typeof m.exitCode === 'number') return m.exitCode;
  let last: number | null = null;
  for (const x of m.content.matchAll(EXIT_RE)) last = Number(x[1]);
  return last;
}

function shortPath(p: string): string {
  const parts = p.split('/').filter((s) => s.length > 0);
  return parts.length <= 2 ? p : parts.slice(-2).join('/');
}

/** What one pass over a turn's messages collects, before the status and action are judged. */
interface TurnScan {
  files: string[];
  commands: string[];
  errors: string[];
  toolNames: string[];
  toolCalls: number;
  /** Tool results, and how many of them failed. */
  results: number;
  failed: number;
  exitStatus: number | null;
  /** Every message's content, each followed by a newline. */
  text: string;
}

function scanTurn(messages: readonly SummaryMessage[]): TurnScan {
  const files: string[] = [];
  const commands: string[] = [];
  const errors: string[] = [];
  const toolNames: string[] = [];
  let toolCalls = 0;
  let results = 0;
  let failed = 0;
  let exitStatus: number | null = null;
  let text = '';

  for (const m of messages) {
    text += `${m.content}\n`;
    for (const c of m.toolCalls ?? []) {
      toolCalls++;
      pushUnique(toolNames, c.name);
      const fields = inputFields(c.input);
      for (const k of PATH_KEYS) {
        const v = fields[k];
        if (typeof v === 'string') pushUnique(files, v);
      }
      for (const k of ['command', 'cmd']) {
        const v = fields[k];
        if (typeof v === 'string') pushUnique(commands, firstLine(v));
      }
    }
    if (m.toolName) pushUnique(toolNames, m.toolName);
    filesOf(m.content, files);
    commandsOf(m.content, commands);
    for (const e of m.content.matchAll(ERROR_RE)) pushUnique(errors, e[0]);
    for (const t of m.content.matchAll(TOOL_NAME_TEXT_RE)) pushUnique(toolNames, t[1] ?? t[2]!);
    if (m.role === 'tool') {
      results++;
      const exit = exitOf(m);
      if (exit !== null) exitStatus = exit;
      if (m.isError === true || (exit !== null && exit !== 0)) failed++;
    }
  }
  return { files, commands, errors, toolNames, toolCalls, results, failed, exitStatus, text };
}

/**
 * Extracts a turn's facts deterministically, with no model call: files, commands, errors, exit
 * status, the first meaningful line, and from them the status, action type and a summary of at
 * most 280 code points. Same input, same output, on every machine.
 *
 * @example
 * describeTurn([{ role: 'tool', content: '$ npm test\nTypeError: x is undefined\nexit code 1' }]);
 * // { status: 'FAILED', action_type: 'VERIFICATION', errors: ['TypeError'], exit_status: 1, ... }
 */
export function describeTurn(turn: SummaryMessage | readonly SummaryMessage[]): TurnFacts {
  const messages: readonly SummaryMessage[] = Array.isArray(turn)
    ? (turn as readonly SummaryMessage[])
    : [turn as SummaryMessage];
  const { files, commands, errors, toolNames, toolCalls, results, failed, exitStatus, text } =
    scanTurn(messages);

  const answeredAll = toolCalls === 0 || results >= toolCalls;
  let status: TurnFacts['status'] = 'SUCCESS';
  if (!answeredAll) status = 'BLOCKED';
  else if (failed > 0) status = failed >= results ? 'FAILED' : 'PARTIAL';

  const edits =
    toolNames.some((n) => EDIT_TOOL_RE.test(n)) || DIFF_RE.test(text) || /\bUpdate\(/.test(text);
  let action: TurnFacts['action_type'] = 'OTHER';
  if (edits) action = REFACTOR_RE.test(text) ? 'REFACTOR' : 'CODE_MODIFICATION';
  else if (commands.some((c) => VERIFY_RE.test(c))) action = 'VERIFICATION';
  else if (commands.length > 0) action = 'COMMAND_EXECUTION';
  else if (toolNames.some((n) => READ_TOOL_RE.test(n))) action = 'EXPLORATION';

  const lead = messages.find((m) => m.role !== 'tool') ?? messages[0];
  const role = lead?.role ?? 'turn';
  const first = cut(meaningfulLine(lead?.content ?? '') || meaningfulLine(text), 120);

  const parts: string[] = [];
  const calls = toolCalls > 0 ? ` (${toolCalls} tool call${toolCalls === 1 ? '' : 's'})` : '';
  parts.push(`${role}${calls}: ${first || '(no text)'}`);
  if (exitStatus !== null) parts.push(`exit ${exitStatus}`);
  if (errors.length > 0) parts.push(`errors: ${errors.slice(0, 3).join(', ')}`);
  if (commands.length > 0) {
    parts.push(
      `ran: ${commands
        .slice(0, 2)
        .map((c) => cut(c, 60))
        .join('; ')}`,
    );
  }
  if (files.length > 0) {
    const more = files.length > 4 ? ` (+${files.length - 4})` : '';
    parts.push(`files: ${files.slice(0, 4).map(shortPath).join(', ')}${more}`);
  }

  return {
    summary: cut(wellFormed(parts.join(' | ')), MAX_SUMMARY_CHARS),
    role,
    first_line: first,
    files,
    commands,
    errors,
    exit_status: exitStatus,
    tool_calls: toolCalls,
    status,
    action_type: action,
    target_files: sortedUnique(files.map(wellFormed)),
  };
}

/**
 * The default, offline summary of a turn (at most 280 code points): role, first meaningful line,
 * exit status, errors, commands and files. Pure and deterministic; the eval imports it too.
 *
 * @example
 * summarizeTurn({ role: 'user', content: 'Set the PostgreSQL port to 5433 in config/db.yml' });
 * // 'user: Set the PostgreSQL port to 5433 in config/db.yml | files: config/db.yml'
 */
export function summarizeTurn(turn: SummaryMessage | readonly SummaryMessage[]): string {
  return describeTurn(turn).summary;
}
