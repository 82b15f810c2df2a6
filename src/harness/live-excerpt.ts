import type { Message } from './messages.js';
import { renderMessage } from './render.js';
import type { TokenMeter } from './token-meter.js';

/**
 * What a pack does with a live turn (L0) that does not fit the budget beside the pinned layer:
 * `excerpt` (default) sends the head and the tail of its oversized tool outputs (then of the
 * prompt) with a marker line between them; `send-whole` sends it whole, over budget.
 */
export type LiveOverflow = 'excerpt' | 'send-whole';

/** One live message sent as an excerpt: recorded in the pack metadata and the events. */
export interface LiveExcerptNote {
  /** History position of the message (the session keeps it whole). */
  step_id: number;
  role: 'tool' | 'user';
  /** Tokens of the message as the history has it. */
  tokens: number;
  /** Tokens of the message as sent. */
  sent_tokens: number;
  /** UTF-16 code units kept from the start and from the end of its content. */
  head_chars: number;
  tail_chars: number;
  /** Tokens the marker line says were left out. */
  left_out_tokens: number;
}

/** The marker line between the head and the tail of an excerpt. */
export function excerptMarker(leftOut: number, budget: number, step: number, role: string): string {
  const what = role === 'tool' ? 'output' : 'message';
  return `[contextfold: ${leftOut} tokens of this ${what} left out of this call to fit the ${budget}-token budget; the whole ${what} is kept in the session (step ${step})]`;
}

const isHigh = (c: number): boolean => c >= 0xd800 && c <= 0xdbff;
const isLow = (c: number): boolean => c >= 0xdc00 && c <= 0xdfff;

/**
 * The longest length `n` (searched, so the cost is bounded by the excerpt, not the text) such
 * that `measure(n) <= max`; `measure` grows with `n`.
 */
function longestWithin(limit: number, max: number, measure: (n: number) => number): number {
  if (max <= 0 || limit === 0) return 0;
  let lo = 0;
  let hi = Math.min(limit, Math.max(16, max * 4));
  while (hi < limit && measure(hi) <= max) {
    lo = hi;
    hi = Math.min(limit, hi * 2);
  }
  if (measure(hi) <= max) return hi;
  while (hi - lo > 1) {
    const mid = lo + Math.floor((hi - lo) / 2);
    if (measure(mid) <= max) lo = mid;
    else hi = mid;
  }
  return lo;
}

/** Head length within `max` tokens: ends at a line end when one is in its second half. */
function headLength(text: string, max: number, meter: TokenMeter): number {
  let n = longestWithin(text.length, max, (k) => meter.text(text.slice(0, k)));
  const nl = n > 0 ? text.lastIndexOf('\n', n - 1) : -1;
  if (n < text.length && nl >= 0 && nl + 1 >= n / 2) n = nl + 1;
  if (n > 0 && isHigh(text.charCodeAt(n - 1))) n--;
  return n;
}

/** Tail length within `max` tokens: starts at a line start when one is in its first half. */
function tailLength(text: string, max: number, meter: TokenMeter, limit: number): number {
  let n = longestWithin(limit, max, (k) => meter.text(text.slice(text.length - k)));
  const start = text.length - n;
  const nl = text.indexOf('\n', start);
  if (n < text.length && start > 0 && nl >= 0 && nl + 1 - start <= n / 2) n = text.length - nl - 1;
  if (n > 0 && isLow(text.charCodeAt(text.length - n))) n--;
  return n;
}

/** A live message to cut, with what is known of it. */
interface LiveMessage {
  message: Message;
  step: number;
  /** Tokens of the message rendered, and of its content alone. */
  tokens: number;
  contentTokens: number;
}

interface Cut {
  message: Message;
  tokens: number;
  note: LiveExcerptNote;
}

/** The message with its content cut to `head` + marker + `tail` for a body of `room` tokens. */
function cutAt(m: LiveMessage, room: number, budget: number, meter: TokenMeter): Cut {
  const text = m.message.content;
  const headMax = Math.floor(room / 2);
  const head = headLength(text, headMax, meter);
  const tail = tailLength(text, room - headMax, meter, text.length - head);
  const h = text.slice(0, head);
  const t = text.slice(text.length - tail);
  const leftOut = Math.max(
    0,
    m.contentTokens - (head > 0 ? meter.text(h) : 0) - (tail > 0 ? meter.text(t) : 0),
  );
  let body = h;
  if (h !== '' && !h.endsWith('\n')) body += '\n';
  body += excerptMarker(leftOut, budget, m.step, m.message.role);
  if (t !== '') body += `\n${t}`;
  const message = { ...m.message, content: body } as Message;
  const tokens = meter.text(renderMessage(message));
  const note: LiveExcerptNote = {
    step_id: m.step,
    role: m.message.role as 'tool' | 'user',
    tokens: m.tokens,
    sent_tokens: tokens,
    head_chars: head,
    tail_chars: tail,
    left_out_tokens: leftOut,
  };
  return { message, tokens, note };
}

/**
 * The message cut to at most `cap` tokens (rendered), or as small as it gets (the marker alone)
 * when `cap` is below that. Deterministic: a few exact re-measures, never a guess.
 */
function excerptMessage(m: LiveMessage, cap: number, budget: number, meter: TokenMeter): Cut {
  const bare = cutAt(m, 0, budget, meter);
  let room = cap - bare.tokens;
  if (room <= 0) return bare;
  for (let i = 0; i < 6; i++) {
    const cut = cutAt(m, room, budget, meter);
    if (cut.tokens <= cap) return cut;
    room -= Math.max(1, cut.tokens - cap);
    if (room <= 0) break;
  }
  return bare;
}

/**
 * The largest cap `c` such that the eligible messages, each cut to `min(tokens, c)`, fit in
 * `room` (the water level that shares the room between several oversized outputs).
 */
function waterLevel(tokens: readonly number[], room: number): number {
  let lo = 0;
  let hi = Math.max(0, ...tokens);
  const fits = (c: number): boolean => tokens.reduce((n, t) => n + Math.min(t, c), 0) <= room;
  if (fits(hi)) return hi;
  while (hi - lo > 1) {
    const mid = lo + Math.floor((hi - lo) / 2);
    if (fits(mid)) lo = mid;
    else hi = mid;
  }
  return lo;
}

/** Input of {@link excerptLive}. */
export interface ExcerptLiveInput {
  /** The live turn's messages as sent (plain), their history positions and their tokens. */
  messages: readonly Message[];
  steps: readonly number[];
  tokens: readonly number[];
  /** Tokens the live messages may take in all: the budget minus L3 and the pages. */
  room: number;
  budget: number;
  meter: TokenMeter;
}

/** The live turn as sent after {@link excerptLive}. */
export interface LiveExcerpt {
  messages: Message[];
  tokens: number[];
  notes: LiveExcerptNote[];
}

function cutGroup(input: ExcerptLiveInput, eligible: readonly number[]): LiveExcerpt {
  const { messages, steps, tokens, meter, budget } = input;
  const fixed = tokens.reduce((n, t, i) => (eligible.includes(i) ? n : n + t), 0);
  const cap = waterLevel(
    eligible.map((i) => tokens[i]!),
    input.room - fixed,
  );
  const out: LiveExcerpt = { messages: [...messages], tokens: [...tokens], notes: [] };
  for (const i of eligible) {
    if (tokens[i]! <= cap) continue;
    const m = messages[i]!;
    const live = {
      message: m,
      step: steps[i]!,
      tokens: tokens[i]!,
      contentTokens: meter.text(m.content),
    };
    const cut = excerptMessage(live, cap, budget, meter);
    // Below the marker's own size a cut only adds tokens and removes the content: sent whole.
    if (cut.tokens >= tokens[i]!) continue;
    out.messages[i] = cut.message;
    out.tokens[i] = cut.tokens;
    out.notes.push(cut.note);
  }
  return out;
}

/**
 * Bounds a live turn that does not fit its room: the tool outputs are cut first (the room
 * shared between them), then, if that is not enough, the user prompt as well. A cut message
 * keeps its role, ids and headers (a tool call and its result stay paired) and sends the head
 * and the tail of its content verbatim with one marker line between them. Assistant messages
 * are never cut. Null when the turn fits as it is. The history keeps every byte.
 *
 * @example
 * const cut = excerptLive({ messages, steps: [7, 8], tokens: [40, 48_000], room: 15_000, budget: 16_000, meter });
 */
export function excerptLive(input: ExcerptLiveInput): LiveExcerpt | null {
  const total = input.tokens.reduce((a, b) => a + b, 0);
  if (total <= input.room) return null;
  const tools = input.messages.flatMap((m, i) => (m.role === 'tool' ? [i] : []));
  const users = input.messages.flatMap((m, i) => (m.role === 'user' ? [i] : []));
  let best: LiveExcerpt | null = null;
  for (const eligible of [tools, [...tools, ...users]]) {
    if (eligible.length === 0 || (best !== null && eligible.length === tools.length)) continue;
    const cut = cutGroup(input, eligible);
    best = cut;
    if (cut.tokens.reduce((a, b) => a + b, 0) <= input.room) return cut;
  }
  return best !== null && best.notes.length > 0 ? best : null;
}
