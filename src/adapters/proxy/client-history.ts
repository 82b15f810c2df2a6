import { stripArchivedBlocks } from '../../harness/archived-block.js';
import type { Message } from '../../harness/messages.js';
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
 * A client's history in the neutral form (the `../shared/data` turns format: tool calls and
 * results as labelled text, one neutral message per request message, a tool result its own
 * `tool` message that joins the call's turn), with the origin of every message so that what
 * the pack keeps is sent as the client's own bytes.
 */
export interface ClientHistory {
  messages: Message[];
  origin: Origin[];
}

/** Tool call id → tool name, filled as assistant messages are read (labels of results). */
export type ToolNames = Map<string, string>;

/**
 * The text of a message part in the neutral history, as the importers render turns: text as
 * it is, a call as `[tool_use: NAME id=ID]` and its input, a result as `[tool_result: NAME
 * id=ID]` and its content.
 *
 * @example
 * partText({ kind: 'tool_use', id: 't1', name: 'Bash', input: '{}' }, names); // '[tool_use: Bash id=t1]\n{}'
 */
export function partText(part: MessagePart, names: ToolNames): string {
  switch (part.kind) {
    case 'text':
      return part.text;
    case 'tool_use':
      names.set(part.id, part.name);
      return `${toolUseLabel(part.name, part.id)}\n${part.input}`;
    case 'tool_result':
      return `${toolResultLabel(names.get(part.toolUseId) ?? null, part.toolUseId, part.isError)}\n${part.content}`;
  }
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

  push(m: Message, origin: Origin): void {
    this.messages.push({ ...m, content: storedContent(m.content) } as Message);
    this.origin.push(origin);
  }

  done(): ClientHistory {
    return { messages: this.messages, origin: this.origin };
  }
}
