import type {
  LanguageModelV3Message,
  LanguageModelV3Prompt,
  LanguageModelV3ToolResultOutput,
} from '@ai-sdk/provider';
import { stripArchivedBlocks } from '../../harness/archived-block.js';
import type { Message, ToolCall } from '../../harness/messages.js';
import { stableJson } from '../../harness/render.js';

/** Neutral messages of a prompt, each with the index of the AI SDK message it came from. */
export interface ConvertedPrompt {
  messages: Message[];
  /** `origin[i]` is the prompt index of `messages[i]`. */
  origin: number[];
}

function fileLabel(p: { mediaType: string; filename?: string }): string {
  return `[file: ${p.mediaType}${p.filename ? ` ${p.filename}` : ''}]`;
}

/**
 * Text of a tool result output, as the neutral model stores it.
 *
 * @example
 * outputText({ type: 'json', value: { ok: true, n: 2 } }); // '{"n":2,"ok":true}'
 */
export function outputText(output: LanguageModelV3ToolResultOutput): string {
  switch (output.type) {
    case 'text':
    case 'error-text':
      return output.value;
    case 'json':
    case 'error-json':
      return stableJson(output.value);
    case 'execution-denied':
      return `[execution denied${output.reason ? `: ${output.reason}` : ''}]`;
    case 'content':
      return output.value
        .map((v) =>
          v.type === 'text' ? v.text : `[${v.type}${'mediaType' in v ? `: ${v.mediaType}` : ''}]`,
        )
        .join('\n');
    default:
      return stableJson(output);
  }
}

/**
 * Converts an AI SDK (`LanguageModelV3Prompt`) message list to the harness's neutral messages:
 * text joined, files as labels, tool calls with their inputs, one neutral tool message per
 * tool result. Reasoning parts are not part of the neutral history (the original message is
 * sent verbatim while it stays in the recent layer). Archived blocks are stripped.
 *
 * @example
 * toNeutral([{ role: 'user', content: [{ type: 'text', text: 'hi' }] }]).messages; // [{ role: 'user', content: 'hi' }]
 */
export function toNeutral(prompt: LanguageModelV3Prompt): ConvertedPrompt {
  const messages: Message[] = [];
  const origin: number[] = [];
  const push = (m: Message, i: number) => {
    messages.push(m);
    origin.push(i);
  };
  prompt.forEach((m: LanguageModelV3Message, i) => {
    switch (m.role) {
      case 'system':
        push({ role: 'system', content: m.content }, i);
        break;
      case 'user': {
        const text = m.content.map((p) => (p.type === 'text' ? p.text : fileLabel(p))).join('\n');
        push({ role: 'user', content: stripArchivedBlocks(text).text }, i);
        break;
      }
      case 'assistant': {
        const texts: string[] = [];
        const calls: ToolCall[] = [];
        for (const p of m.content) {
          if (p.type === 'text') texts.push(p.text);
          else if (p.type === 'file') texts.push(fileLabel(p));
          else if (p.type === 'tool-call')
            calls.push({ id: p.toolCallId, name: p.toolName, input: p.input ?? null });
          else if (p.type === 'tool-result') {
            texts.push(`[tool_result ${p.toolName} id=${p.toolCallId}]\n${outputText(p.output)}`);
          }
        }
        push(
          {
            role: 'assistant',
            content: texts.join('\n'),
            ...(calls.length > 0 ? { toolCalls: calls } : {}),
          },
          i,
        );
        break;
      }
      case 'tool':
        for (const p of m.content) {
          if (p.type !== 'tool-result') continue;
          const isError = p.output.type === 'error-text' || p.output.type === 'error-json';
          push(
            {
              role: 'tool',
              content: outputText(p.output),
              toolCallId: p.toolCallId,
              toolName: p.toolName,
              ...(isError ? { isError: true } : {}),
            },
            i,
          );
        }
        break;
    }
  });
  return { messages, origin };
}

/**
 * A comparable key of a neutral message (ignores step ids and times).
 *
 * @example
 * messageKey({ ...m, timestamp: new Date().toISOString() }) === messageKey(m); // true
 */
export function messageKey(m: Message): string {
  const base: Record<string, unknown> = { role: m.role, content: m.content };
  if (m.role === 'assistant' && m.toolCalls?.length) base.toolCalls = m.toolCalls;
  if (m.role === 'tool') {
    base.toolCallId = m.toolCallId ?? null;
    base.toolName = m.toolName ?? null;
    base.isError = m.isError ?? false;
  }
  return stableJson(base);
}
