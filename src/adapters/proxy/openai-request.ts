import type OpenAI from 'openai';
import type { ContextPack } from '../../harness/pack.js';
import type { ClientHistory } from './client-history.js';
import type { OpenAiBody } from './openai-history.js';
import { packItems, stepChange } from './pack-items.js';
import type { UpstreamBody } from './upstream-body.js';

type ChatMessage = OpenAI.ChatCompletionMessageParam;

function withPages(m: ChatMessage, pages: string): ChatMessage {
  const content = (m as { content?: unknown }).content;
  if (Array.isArray(content)) {
    return { ...m, content: [...content, { type: 'text', text: pages }] } as ChatMessage;
  }
  const own = typeof content === 'string' ? content : '';
  return { ...m, content: `${own}\n\n${pages}` } as ChatMessage;
}

/**
 * The request to send upstream for a pack: the client's body with `messages` rebuilt from the
 * pack. Every kept message is the client's own object (tool calls, images, names and unknown
 * fields untouched); the folded-step records are one more system message after the client's
 * own (`developer` when the client uses that role); the pages go at the end of the live
 * message; a compressed tool output carries the pack's pointer text. Every other field is
 * passed as it came.
 *
 * @example
 * const { body: upstream } = openAiUpstream(body, history, pack);
 */
export function openAiUpstream(
  body: OpenAiBody,
  history: ClientHistory,
  pack: ContextPack,
): UpstreamBody {
  const warnings: string[] = [];
  const messages: ChatMessage[] = [];
  const systemRole = body.messages.find((m) => m.role === 'developer') ? 'developer' : 'system';
  for (const item of packItems(pack)) {
    if (item.kind === 'folded' || item.step === null) {
      messages.push({ role: systemRole, content: item.message.content });
      continue;
    }
    const o = history.origin[item.step]!;
    const original = body.messages[o.message]!;
    if (item.kind === 'pinned') {
      messages.push(original);
      continue;
    }
    if (item.excerpt) {
      // A live message cut to fit the budget: its ids and role kept, its text as the pack has it.
      messages.push({ ...original, content: item.message.content } as ChatMessage);
      continue;
    }
    const change = stepChange(item.message, history.messages[item.step]!);
    if (change.kind === 'same') messages.push(original);
    else if (change.kind === 'pages') messages.push(withPages(original, change.text));
    else if (original.role === 'tool') messages.push({ ...original, content: change.content });
    else {
      warnings.push(
        `step ${item.step}: the pack changed a ${original.role} message; its original was sent`,
      );
      messages.push(original);
    }
  }
  // Every message the client's own object, none added, dropped or changed: the body goes as it
  // came, even when the pack put a system message from mid-conversation with the other pinned
  // ones (a reorder alone would move an instruction and change the cached prompt prefix).
  const own = new Set<ChatMessage>(body.messages);
  const unchanged =
    messages.length === body.messages.length &&
    messages.every((m) => own.delete(m)) &&
    own.size === 0;
  if (unchanged) return { body, unchanged: true, warnings };
  return { body: { ...body, messages }, unchanged: false, warnings };
}
