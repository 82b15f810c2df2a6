import { jsonSyntaxError } from './json-syntax.js';
import { sourceError } from './source-error.js';

/**
 * Parses a whole-file JSON document; a syntax error names the line it is on.
 *
 * @example
 * parseJsonDocument('[1, 2]', 'a.json'); // [1, 2]
 */
export function parseJsonDocument(text: string, source: string): unknown {
  try {
    return JSON.parse(text);
  } catch {
    const p = jsonSyntaxError(text);
    throw sourceError(
      source,
      p?.line ?? null,
      `not valid JSON (${p ? `${p.message} at column ${p.column}` : 'not parseable'})`,
    );
  }
}

/**
 * Line numbers (1-based) where each element of the message array starts: the root array, or the
 * array under the root object's `key`. Used only to name the line of a structurally bad message,
 * so it assumes `text` already parsed.
 *
 * @example
 * messageLines('[\n{"a":1},\n{"b":2}\n]', 'messages'); // [2, 3]
 */
export function messageLines(text: string, key: string): number[] {
  const lines: number[] = [];
  let line = 1;
  let depth = 0;
  let inString = false;
  let escaped = false;
  let stringStart = -1;
  let lastKey: string | null = null;
  let pendingString: string | null = null;
  let targetDepth = -1; // depth of the target array's elements
  let expectElement = false;
  for (let i = 0; i < text.length; i++) {
    const c = text[i]!;
    if (c === '\n') line++;
    if (inString) {
      if (escaped) escaped = false;
      else if (c === '\\') escaped = true;
      else if (c === '"') {
        inString = false;
        if (depth === 1) pendingString = text.slice(stringStart, i + 1);
      }
      continue;
    }
    if (c === ' ' || c === '\t' || c === '\n' || c === '\r' || c === '\uFEFF') continue;
    if (expectElement && c !== ']') {
      lines.push(line);
      expectElement = false;
    }
    switch (c) {
      case '"':
        inString = true;
        stringStart = i;
        break;
      case ':':
        if (depth === 1 && pendingString !== null) lastKey = JSON.parse(pendingString) as string;
        pendingString = null;
        break;
      case '[':
      case '{':
        depth++;
        if (c === '[' && targetDepth < 0 && (depth === 1 || (depth === 2 && lastKey === key))) {
          targetDepth = depth;
          expectElement = true;
        }
        break;
      case ']':
      case '}':
        if (depth === targetDepth) return lines;
        depth--;
        break;
      case ',':
        if (depth === 1) pendingString = null;
        if (depth === targetDepth) expectElement = true;
        break;
      default:
        break;
    }
  }
  return lines;
}

/**
 * Finds the message array of a chat document: a bare array, or `{ "messages": [...] }` (a
 * request body). Returns the array and a function giving the line of element `i`.
 */
export function messageArray(
  text: string,
  source: string,
  what: string,
): { messages: unknown[]; lineOf: (i: number) => number | null; root: unknown } {
  const root = parseJsonDocument(text, source);
  let messages: unknown;
  if (Array.isArray(root)) messages = root;
  else if (
    typeof root === 'object' &&
    root !== null &&
    Array.isArray((root as { messages?: unknown }).messages)
  ) {
    messages = (root as { messages: unknown[] }).messages;
  } else {
    throw sourceError(
      source,
      null,
      `expected ${what}: a JSON array of messages or an object with a "messages" array`,
    );
  }
  let lines: number[] | null = null;
  return {
    root,
    messages: messages as unknown[],
    lineOf: (i) => {
      lines ??= messageLines(text, 'messages');
      return lines[i] ?? null;
    },
  };
}
