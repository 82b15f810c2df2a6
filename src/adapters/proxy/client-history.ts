import { stripArchivedBlocks } from '../../harness/archived-block.js';
import { artifactSource } from '../../harness/compress.js';
import type { Message, ToolMessage } from '../../harness/messages.js';
import {
  type MessagePart,
  toolResultLabel,
  toolUseLabel,
} from '../../import/conversation-builder.js';

/** Where a neutral message came from in a request. */
export interface Origin {
  /** Index in the request's `messages`; -1 for Anthropic's top-level `system`. */
  message: number;
  /** Content block indices of that message, or null for all of it (string content, OpenAI). */
  blocks: number[] | null;
}

/**
 * A client's history in the neutral form, with the origin of every message so that what the
 * pack keeps is sent as the client's own bytes. One neutral message per request message, except
 * that every tool result is its own `tool` message (it joins the turn of the call it answers,
 * so a call and its result fold and move together). An assistant message reads as the
 * importers render it (text, then `[tool_use: NAME id=ID]` and the input); a tool message
 * carries the raw result with its tool's name, error flag and, for a read-like call, the file
 * it shows (`source`), so the recent layer's compression can spot repeated and superseded
 * outputs.
 */
export interface ClientHistory {
  messages: Message[];
  origin: Origin[];
}

/** The calls seen so far, by id: their tool name and input (for their results). */
export type ToolCalls = Map<string, { name: string; input: string }>;

/**
 * The text of a message part in an assistant or user message, as the importers render turns:
 * text as it is, a call as `[tool_use: NAME id=ID]` and its input (the call is remembered for
 * its result).
 *
 * @example
 * partText({ kind: 'tool_use', id: 't1', name: 'Bash', input: '{}' }, calls); // '[tool_use: Bash id=t1]\n{}'
 */
export function partText(part: MessagePart, calls: ToolCalls): string {
  switch (part.kind) {
    case 'text':
      return part.text;
    case 'tool_use':
      calls.set(part.id, { name: part.name, input: part.input });
      return `${toolUseLabel(part.name, part.id)}\n${part.input}`;
    case 'tool_result':
      return `${toolResultLabel(calls.get(part.toolUseId)?.name ?? null, part.toolUseId, part.isError)}\n${part.content}`;
  }
}

function parsedInput(input: string): unknown {
  try {
    return JSON.parse(input);
  } catch {
    return input;
  }
}

/**
 * The neutral `tool` message of a tool result: its raw content, the name of the tool that
 * produced it, its error flag, and the file it shows when the call was a read.
 *
 * @example
 * toolMessage({ kind: 'tool_result', toolUseId: 't1', content: 'ok', isError: false }, calls);
 */
export function toolMessage(
  part: Extract<MessagePart, { kind: 'tool_result' }>,
  calls: ToolCalls,
): ToolMessage {
  const call = calls.get(part.toolUseId);
  const source = call ? artifactSource(call.name, parsedInput(call.input)) : undefined;
  return {
    role: 'tool',
    content: part.content,
    ...(call && call.name !== '' ? { toolName: call.name } : {}),
    ...(part.isError ? { isError: true } : {}),
    ...(source ? { source } : {}),
  };
}

/**
 * Neutral content as the session stores it: archived blocks a client echoes back are not part
 * of the history (the session strips them too, so both sides compare equal).
 */
export function storedContent(text: string): string {
  return text.includes('<archived_record ') ? stripArchivedBlocks(text).text : text;
}

/** Collects neutral messages with their origins. */
export class HistoryBuilder {
  readonly messages: Message[] = [];
  readonly origin: Origin[] = [];
  readonly calls: ToolCalls = new Map();

  push(m: Message, origin: Origin): void {
    this.messages.push({ ...m, content: storedContent(m.content) } as Message);
    this.origin.push(origin);
  }

  done(): ClientHistory {
    return { messages: this.messages, origin: this.origin };
  }
}
