import { renderToolInput } from '../harness/turn-text.js';
import type { MessagePart } from './conversation-builder.js';
import { isRecord } from './source-error.js';

/** Reports a structural problem of one message (the caller adds file and line). */
export type Fail = (problem: string) => never;

function str(block: Record<string, unknown>, key: string, where: string, fail: Fail): string {
  const v = block[key];
  if (typeof v !== 'string') fail(`${where} has no string "${key}"`);
  return v as string;
}

function mediaLabel(kind: string, block: Record<string, unknown>): string {
  const src = isRecord(block.source) ? block.source : {};
  const detail =
    typeof block.title === 'string'
      ? block.title
      : typeof src.media_type === 'string'
        ? src.media_type
        : typeof src.url === 'string'
          ? src.url
          : typeof src.type === 'string'
            ? src.type
            : '';
  return `[${kind}${detail ? `: ${detail}` : ''}]`;
}

/** Renders the content of a tool result: a string, or text/image blocks. */
export function renderResultContent(content: unknown, fail: Fail): string {
  if (content === undefined || content === null) return '';
  if (typeof content === 'string') return content;
  if (!Array.isArray(content)) return JSON.stringify(content, null, 1);
  const out: string[] = [];
  for (const [i, b] of content.entries()) {
    if (!isRecord(b) || typeof b.type !== 'string')
      fail(`tool result content block ${i} has no "type"`);
    const block = b as Record<string, unknown>;
    if (block.type === 'text') out.push(str(block, 'text', `tool result text block ${i}`, fail));
    else if (block.type === 'image' || block.type === 'document')
      out.push(mediaLabel(block.type, block));
    else out.push(`[${block.type}]\n${JSON.stringify(block, null, 1)}`);
  }
  return out.join('\n');
}

/**
 * Reduces Anthropic Messages API content (a string or content blocks: `text`, `thinking`,
 * `tool_use`, `tool_result`, server tools, images, ...) to message parts. Claude Code transcripts
 * store the same blocks in `message.content`. Unknown block types are kept as JSON, not dropped.
 *
 * @example
 * anthropicParts([{ type: 'tool_use', id: 't1', name: 'Bash', input: { command: 'ls' } }], fail);
 */
export function anthropicParts(content: unknown, fail: Fail): MessagePart[] {
  if (typeof content === 'string') return [{ kind: 'text', text: content }];
  if (!Array.isArray(content)) fail('"content" must be a string or an array of content blocks');
  const parts: MessagePart[] = [];
  for (const [i, b] of (content as unknown[]).entries()) {
    if (!isRecord(b) || typeof b.type !== 'string') fail(`content block ${i} has no "type"`);
    const block = b as Record<string, unknown>;
    const type = block.type as string;
    const where = `content block ${i} (${type})`;
    switch (type) {
      case 'text':
        parts.push({ kind: 'text', text: str(block, 'text', where, fail) });
        break;
      case 'thinking':
        parts.push({ kind: 'text', text: `[thinking]\n${str(block, 'thinking', where, fail)}` });
        break;
      case 'redacted_thinking':
        parts.push({ kind: 'text', text: '[redacted_thinking]' });
        break;
      case 'image':
      case 'document': {
        const src = isRecord(block.source) ? block.source : {};
        const text = src.type === 'text' && typeof src.data === 'string' ? `\n${src.data}` : '';
        parts.push({ kind: 'text', text: `${mediaLabel(type, block)}${text}` });
        break;
      }
      case 'tool_use':
      case 'server_tool_use':
      case 'mcp_tool_use':
        parts.push({
          kind: 'tool_use',
          id: str(block, 'id', where, fail),
          name: str(block, 'name', where, fail),
          input: renderToolInput(block.input),
        });
        break;
      default:
        if (type === 'tool_result' || type.endsWith('_tool_result')) {
          parts.push({
            kind: 'tool_result',
            toolUseId: str(block, 'tool_use_id', where, fail),
            content: renderResultContent(block.content, fail),
            isError: block.is_error === true,
          });
        } else {
          parts.push({ kind: 'text', text: `[${type}]\n${JSON.stringify(block, null, 1)}` });
        }
    }
  }
  return parts;
}
