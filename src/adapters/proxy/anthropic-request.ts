import type Anthropic from '@anthropic-ai/sdk';
import type { ContextPack } from '../../harness/pack.js';
import type { AnthropicBody } from './anthropic-history.js';
import type { ClientHistory } from './client-history.js';
import { type PackItem, packItems, stepChange } from './pack-items.js';
import {
  FOLDED_START_NOTE,
  FOLDED_START_NOTE_NO_RECORDS,
  type UpstreamBody,
} from './upstream-body.js';

/** Anthropic accepts at most this many `cache_control` breakpoints in one request. */
export const MAX_CACHE_BREAKPOINTS = 4;

type Block = Record<string, unknown>;

/** What goes upstream for one request message: some of its blocks, maybe changed. */
interface Piece {
  message: number;
  /** Block indices taken from the original (null: its string content). */
  blocks: number[] | null;
  content: Block[] | string;
  changed: boolean;
  pages: string | null;
}

function piece(
  item: Extract<PackItem, { kind: 'step' }>,
  body: AnthropicBody,
  history: ClientHistory,
  warnings: string[],
): Piece {
  const o = history.origin[item.step]!;
  const original = body.messages[o.message]!;
  const all = original.content;
  const blocks = o.blocks === null ? null : o.blocks;
  let content: Block[] | string =
    blocks === null || typeof all === 'string'
      ? (all as string | Block[])
      : blocks.map((b) => (all as unknown as Block[])[b]!);
  if (item.excerpt) {
    // A live message cut to fit the budget: its tool result (ids kept) or its text.
    const only = Array.isArray(content) && content.length === 1 ? content[0]! : null;
    const text = item.message.content;
    if (only?.type === 'tool_result') content = [{ ...only, content: text }];
    else content = typeof content === 'string' ? text : [{ type: 'text', text }];
    return { message: o.message, blocks, content, changed: true, pages: null };
  }
  const change = stepChange(item.message, history.messages[item.step]!);
  if (change.kind === 'pages') {
    return { message: o.message, blocks, content, changed: false, pages: change.text };
  }
  if (change.kind === 'replaced') {
    const only = Array.isArray(content) && content.length === 1 ? content[0]! : null;
    if (only?.type === 'tool_result') {
      content = [{ ...only, content: change.content }];
      return { message: o.message, blocks, content, changed: true, pages: null };
    }
    warnings.push(
      `step ${item.step}: the pack changed a ${item.message.role} message; its original was sent`,
    );
  }
  return { message: o.message, blocks, content, changed: false, pages: null };
}

/** Joins the pieces of one request message; the original object when nothing changed. */
function assemble(pieces: Piece[], original: Anthropic.MessageParam): Anthropic.MessageParam {
  const pages = pieces.map((p) => p.pages).filter((p): p is string => p !== null);
  if (typeof original.content === 'string') {
    const cut = pieces.find((p) => p.changed && typeof p.content === 'string');
    if (cut) return { ...original, content: cut.content as string };
    if (pages.length === 0) return original;
    return { ...original, content: `${original.content}\n\n${pages.join('\n\n')}` };
  }
  const taken = pieces.flatMap((p) => p.blocks ?? []);
  const whole =
    taken.length === original.content.length &&
    taken.every((b, i) => b === i) &&
    !pieces.some((p) => p.changed);
  if (whole && pages.length === 0) return original;
  const content = pieces.flatMap((p) => p.content as Block[]);
  for (const text of pages) content.push({ type: 'text', text });
  return { ...original, content } as unknown as Anthropic.MessageParam;
}

function countBreakpoints(value: unknown): { count: number; hourLong: boolean } {
  let count = 0;
  let hourLong = false;
  const visit = (v: unknown): void => {
    if (Array.isArray(v)) {
      for (const x of v) visit(x);
      return;
    }
    if (v === null || typeof v !== 'object') return;
    const o = v as Record<string, unknown>;
    const cc = o.cache_control as Record<string, unknown> | null | undefined;
    if (cc && typeof cc === 'object') {
      count++;
      if (cc.ttl === '1h') hourLong = true;
    }
    if (Array.isArray(o.content)) visit(o.content);
  };
  visit(value);
  return { count, hourLong };
}

/**
 * The folded-step block carries a cache breakpoint unless the request already has the
 * maximum: the prefix up to it (tools, system, records) only changes when a turn is folded.
 * A later breakpoint with a one-hour TTL forces the same TTL here (longer TTLs come first).
 */
function markFolded(folded: Block, body: Record<string, unknown>): void {
  const before = countBreakpoints([body.tools, body.system]);
  const after = countBreakpoints(body.messages);
  if (before.count + after.count >= MAX_CACHE_BREAKPOINTS) return;
  folded.cache_control = after.hourLong ? { type: 'ephemeral', ttl: '1h' } : { type: 'ephemeral' };
}

/**
 * The request to send upstream for a pack: the client's body with `messages` rebuilt from the
 * pack (every kept message or block is the client's own object, untouched: thinking blocks,
 * images, `cache_control` and unknown fields included), the folded-step records as one more
 * `system` text block, and the pages as a text block at the end of the live message. Every
 * other field (tools, metadata, thinking, …) is passed as it came.
 *
 * @example
 * const { body: upstream } = anthropicUpstream(body, history, pack);
 */
export function anthropicUpstream(
  body: AnthropicBody,
  history: ClientHistory,
  pack: ContextPack,
): UpstreamBody {
  const warnings: string[] = [];
  const front: Anthropic.MessageParam[] = [];
  const extra: Block[] = [];
  let folded: Block | null = null;
  const pieces: Piece[] = [];
  for (const item of packItems(pack)) {
    if (item.kind === 'folded') {
      folded = { type: 'text', text: item.message.content };
      extra.push(folded);
    } else if (item.kind === 'pinned') {
      const o = item.step === null ? null : history.origin[item.step]!;
      if (o === null) extra.push({ type: 'text', text: item.message.content });
      else if (o.message >= 0) front.push(body.messages[o.message]!);
    } else {
      pieces.push(piece(item, body, history, warnings));
    }
  }
  const messages: Anthropic.MessageParam[] = [...front];
  for (let i = 0; i < pieces.length; ) {
    let j = i;
    while (j < pieces.length && pieces[j]!.message === pieces[i]!.message) j++;
    messages.push(assemble(pieces.slice(i, j), body.messages[pieces[i]!.message]!));
    i = j;
  }
  if (messages[0]?.role === 'assistant') {
    // The note points to the records only when the pack carries them.
    const note = folded ? FOLDED_START_NOTE : FOLDED_START_NOTE_NO_RECORDS;
    messages.unshift({ role: 'user', content: note });
  }
  const unchanged =
    extra.length === 0 &&
    messages.length === body.messages.length &&
    messages.every((m, i) => m === body.messages[i]);
  if (unchanged) return { body, unchanged: true, warnings };
  const out: Record<string, unknown> = { ...body, messages };
  if (extra.length > 0) {
    const own = body.system;
    const system: Block[] =
      own === undefined || own === null || own === ''
        ? []
        : typeof own === 'string'
          ? [{ type: 'text', text: own }]
          : [...(own as unknown as Block[])];
    out.system = [...system, ...extra];
  }
  if (folded) markFolded(folded, out);
  return { body: out, unchanged: false, warnings };
}
