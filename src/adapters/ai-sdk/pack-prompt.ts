import type { LanguageModelV3Message, LanguageModelV3Prompt } from '@ai-sdk/provider';
import type { Message } from '../../harness/messages.js';
import type { ContextPack, PackEntry } from '../../harness/pack.js';
import { messageKey } from './prompt-messages.js';

/**
 * A neutral message as an AI SDK message (used when no original can be sent verbatim).
 *
 * @example
 * fromNeutral({ role: 'user', content: 'hi' }); // { role: 'user', content: [{ type: 'text', text: 'hi' }] }
 */
export function fromNeutral(m: Message): LanguageModelV3Message {
  switch (m.role) {
    case 'system':
      return { role: 'system', content: m.content };
    case 'user':
      return { role: 'user', content: [{ type: 'text', text: m.content }] };
    case 'assistant':
      return {
        role: 'assistant',
        content: [
          ...(m.content !== '' || !m.toolCalls?.length
            ? [{ type: 'text' as const, text: m.content }]
            : []),
          ...(m.toolCalls ?? []).map((c) => ({
            type: 'tool-call' as const,
            toolCallId: c.id,
            toolName: c.name,
            input: c.input,
          })),
        ],
      };
    case 'tool':
      return {
        role: 'tool',
        content: [
          {
            type: 'tool-result',
            toolCallId: m.toolCallId ?? '',
            toolName: m.toolName ?? '',
            output: m.isError
              ? { type: 'error-text', value: m.content }
              : { type: 'text', value: m.content },
          },
        ],
      };
  }
}

/** How many pack messages an entry contributes, and from which history steps. */
function entrySteps(e: PackEntry): (number | null)[] {
  switch (e.kind) {
    case 'system':
      return [e.step_id];
    case 'note':
    case 'folded_steps_frame':
      return [null];
    case 'turn':
    case 'prompt':
    case 'pending_tool_output':
      return [...e.steps];
    default:
      return [];
  }
}

/**
 * Turns a context pack into the prompt for the model. Messages the pack keeps unchanged are sent
 * as the caller's original AI SDK messages (files, reasoning and provider options intact);
 * folded-step records, pinned notes and compressed messages are converted; the paged-in blocks
 * go in an extra text part at the end of the prompt's user message. A tool message without a
 * tool result (a provider-executed tool's approval) follows the message before it.
 *
 * @example
 * const prompt = packToPrompt(pack, { original: params.prompt, history, origin });
 */
export function packToPrompt(
  pack: ContextPack,
  source: {
    original: LanguageModelV3Prompt;
    history: readonly Message[];
    origin: readonly number[];
    /**
     * User messages the session recorded redacted, by prompt index: the original with each
     * text part redacted (files and provider options kept), and its recorded neutral text.
     */
    redacted?: ReadonlyMap<number, { message: LanguageModelV3Message; text: string }>;
  },
): LanguageModelV3Prompt {
  const steps = pack.entries.flatMap(entrySteps);
  if (steps.length !== pack.messages.length) return pack.messages.map(fromNeutral);
  const out: LanguageModelV3Prompt = [];
  // Prompt messages that have a neutral message.
  const converted = new Set(source.origin);
  let i = 0;
  while (i < pack.messages.length) {
    const step = steps[i];
    const m = pack.messages[i]!;
    const o = step === null || step === undefined ? undefined : source.origin[step];
    if (step === null || step === undefined || o === undefined) {
      out.push(fromNeutral(m));
      i++;
      continue;
    }
    // The run of pack messages that came from the same original message.
    let j = i;
    while (j < pack.messages.length && steps[j] !== null && source.origin[steps[j]!] === o) j++;
    const run = steps.slice(i, j) as number[];
    const all = source.origin.flatMap((x, s) => (x === o ? [s] : []));
    const same = (k: number) =>
      messageKey(pack.messages[k]!) === messageKey(source.history[steps[k]!]!);
    const original = source.original[o]!;
    const whole = run.length === all.length && run.every((s, k) => s === all[k]);
    if (whole && run.every((_, k) => same(i + k))) {
      out.push(original);
    } else if (whole && run.length === 1 && original.role === 'user' && m.role === 'user') {
      // The prompt as recorded (redacted, if the session removed a secret from it), maybe with
      // the paged-in blocks appended: keep the original parts (files, provider options), with
      // the redacted text parts, and add the blocks.
      const red = source.redacted?.get(o);
      const sent = red?.message ?? original;
      const base = red?.text ?? source.history[step]!.content;
      const extra = m.content.startsWith(base) ? m.content.slice(base.length) : null;
      if (extra === null || sent.role !== 'user') out.push(fromNeutral(m));
      else if (extra === '') out.push(sent);
      else out.push({ ...sent, content: [...sent.content, { type: 'text', text: extra }] });
    } else if (whole && original.role === 'tool' && resultCount(original) === run.length) {
      out.push(toolMessage(original, run, i, pack, source.history));
    } else {
      for (let k = i; k < j; k++) out.push(fromNeutral(pack.messages[k]!));
    }
    // A tool message with no tool result (only the approval of a provider-executed tool) has no
    // neutral message: it goes with the message before it, or it was dropped from every prompt.
    if (run.at(-1) === all.at(-1)) {
      for (let f = o + 1; f < source.original.length && !converted.has(f); f++) {
        out.push(source.original[f]!);
      }
    }
    i = j;
  }
  return out;
}

/**
 * A tool message the pack changed some results of (pages after the last one, a compressed or
 * redacted output): each unchanged result is the caller's own part; a result with pages keeps
 * its output type where it can take more text (`content` keeps its images and files, `text`
 * its value); any other changed result is sent as the pack's text. Before, one change rebuilt
 * every result of the message from text (images dropped, `json` turned into `text`).
 */
function toolMessage(
  original: Extract<LanguageModelV3Message, { role: 'tool' }>,
  run: readonly number[],
  at: number,
  pack: ContextPack,
  history: readonly Message[],
): LanguageModelV3Message {
  let r = 0;
  const content = original.content.map((p) => {
    if (p.type !== 'tool-result') return p;
    const k = r++;
    const sent = pack.messages[at + k]!;
    const own = history[run[k]!]!;
    if (messageKey(sent) === messageKey(own)) return p;
    const extra = sent.content.startsWith(own.content)
      ? sent.content.slice(own.content.length)
      : null;
    if (extra !== null && p.output.type === 'content') {
      return {
        ...p,
        output: { ...p.output, value: [...p.output.value, { type: 'text' as const, text: extra }] },
      };
    }
    if (extra !== null && (p.output.type === 'text' || p.output.type === 'error-text')) {
      return { ...p, output: { ...p.output, value: p.output.value + extra } };
    }
    return {
      ...toolPart(fromNeutral(sent)),
      ...(p.providerOptions ? { providerOptions: p.providerOptions } : {}),
    };
  });
  return { ...original, content };
}

/** Tool results of a tool message (one neutral message each). */
function resultCount(m: LanguageModelV3Message): number {
  return m.role === 'tool' ? m.content.filter((p) => p.type === 'tool-result').length : 0;
}

/** The tool-result part of a message {@link fromNeutral} built from a tool message. */
function toolPart(m: LanguageModelV3Message) {
  if (m.role !== 'tool' || m.content[0]?.type !== 'tool-result')
    throw new Error('not a tool result');
  return m.content[0];
}
