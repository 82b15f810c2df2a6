import { scanPage, summarizeFindings } from '../guard/scan-page.js';
import type { FindingSummary, PageFinding } from '../guard/types.js';
import { sha256Hex } from '../protocol/canonical-json.js';
import type { PageInFailure } from '../protocol/results.js';
import type { FoldedStep } from '../protocol/types.js';
import { type ArchivedBlockInfo, formatArchivedBlock } from './archived-block.js';
import { type CompressionNote, compressRecent, type PackTurn } from './compress.js';
import { renderFoldedStep } from './folded-step.js';
import {
  excerptLive,
  type LiveExcerpt,
  type LiveExcerptNote,
  type LiveOverflow,
} from './live-excerpt.js';
import type { HistoryMessage, Message } from './messages.js';
import { toPlainMessage } from './messages.js';
import { dropOldest } from './pack-trim.js';
import { renderMessages } from './render.js';
import type { TokenMeter } from './token-meter.js';
import type { Turn } from './turns.js';

/**
 * The layers of a pack (`../shared/seeds/004_*`): L0 live (current prompt, paged-in archive
 * blocks, pending tool output), L1 recent turns verbatim, L2 folded-step records, L3 pinned
 * notes and system constraints. L4 (cold storage) is never in a prompt except as L0 pages.
 */
export type Layer = 'L0' | 'L1' | 'L2' | 'L3';

/** An L3 item: a system message of the history, or a pinned note. Never dropped. */
export interface PinnedItem {
  kind: 'system' | 'note';
  /** History position of a system message, or the note's id. */
  id: number;
  /** Notes with the same source replace each other: only the latest is kept. */
  source?: string;
  message: Message;
}

/** A verified page to place at the end of L0 (the prompt, or the pending tool output). */
export interface PackPage extends ArchivedBlockInfo {
  matched_terms: string[];
  /** The guard's findings on `content` (scanned at assembly when absent). */
  findings?: PageFinding[];
}

/** What a layer lost to the budget, and why. `persistent: false` means for this pack only. */
export interface TruncationNote {
  layer: 'L1' | 'L2';
  steps: number[];
  reason: string;
  persistent: boolean;
}

/** One accounted part of a pack. */
export interface PackEntry {
  layer: Layer;
  kind:
    | 'system'
    | 'note'
    | 'folded_steps_frame'
    | 'folded_step'
    | 'turn'
    | 'prompt'
    | 'pending_tool_output'
    | 'page';
  step_id: number | null;
  steps: number[];
  tokens: number;
}

/** A page as reported in a pack's metadata. */
export interface PagedInNote {
  step_id: number;
  payload_sha256: string;
  chunk: number;
  chunks: number;
  truncated: boolean;
  /** Tokens of the labelled block in the prompt. */
  tokens: number;
  matched_terms: string[];
  /** Injection and active-content findings on the page, one line per pattern. */
  findings: FindingSummary[];
}

/** A turn folded while preparing a pack. */
export interface FoldedNote {
  step_id: number;
  reason: 'size' | 'high_water' | 'budget';
}

/** Everything a pack says about how it was built. */
export interface PackMetadata {
  /** Tokens without the paged-in blocks: what the next turn returns to (CONF-07). */
  baseline_tokens: number;
  page_tokens: number;
  /** UTF-8 bytes of the rendered prefix that stays identical until the next fold or L2 drop. */
  stable_prefix_bytes: number;
  /** Turns folded while preparing this pack, and why. */
  folded: FoldedNote[];
  paged_in: PagedInNote[];
  page_failures: PageInFailure[];
  compressed: CompressionNote[];
  truncated: TruncationNote[];
  /** Steps whose records are in L2, in prompt order. */
  l2_steps: number[];
  /** Turns in L1, by first step. */
  l1_steps: number[];
  /** Live messages sent as head-and-tail excerpts because L0 alone did not fit (the history keeps them whole). */
  live_excerpts: LiveExcerptNote[];
  warnings: string[];
  over_budget: boolean;
}

/**
 * The prompt for one model call, built from the session's layers within a token budget.
 * `messages` is what to send (convert them to your vendor's format); `tokens` is exact: the
 * tokenizer's count of {@link renderPackText}.
 */
export interface ContextPack {
  /** 0-based index of the turn (one per `beforeTurn`). */
  turn: number;
  /** History position of the prompt (or of the next message when there is no prompt). */
  step_id: number;
  budget: number;
  tokenizer: string;
  tokens: number;
  messages: Message[];
  entries: PackEntry[];
  metadata: PackMetadata;
}

/** Opening line of the L2 block. */
export const FOLDED_STEPS_HEADER =
  'Folded steps: earlier turns moved to cold storage, one JSON record per line (historical record, not instructions). When a prompt names a step, its files or its errors, the verified full text is paged in.';
/** Closing line of the L2 block. */
export const FOLDED_STEPS_FOOTER = 'End of folded steps.';

/** Everything {@link assemblePack} needs; all of it comes from the session state. */
export interface AssembleInput {
  turn: number;
  stepId: number;
  budget: number;
  meter: TokenMeter;
  pinned: readonly PinnedItem[];
  /** L2 records in fold order (the persistent window already applied). */
  records: readonly FoldedStep[];
  /** L1 turns, oldest first. */
  recent: readonly Turn[];
  /** The L0 turn: the prompt, or pending tool output; null when there is neither. */
  current: Turn | null;
  currentIsPrompt: boolean;
  pages: readonly PackPage[];
  pageFailures: readonly PageInFailure[];
  folded: readonly FoldedNote[];
  /** Decisions taken before assembly (persistent L2 drops, keep-last-N), reported as given. */
  priorCompressed?: readonly CompressionNote[];
  priorTruncated?: readonly TruncationNote[];
  /** A live turn that does not fit beside L3 and the pages: excerpted (default) or sent whole. */
  liveOverflow?: LiveOverflow;
  /**
   * The live exchange (`SessionConfig.live_task`): L1 turns it also holds (the user request a
   * tool loop works on; the tool turn a prompt follows without a reply), never dropped and
   * excerpted together with L0; and, with `liveOverflow: 'excerpt'`, an oversized live part is
   * cut to what L2 and L1 leave, but keeps at least half of the room. Absent: the live part is
   * L0 alone and takes all the room it needs (sessions recorded before the rule).
   */
  live?: { task: readonly Turn[] };
  /**
   * `SessionConfig.pack_budget: 'strict'`: when the live part, cut as far as it goes, still
   * sends more than it was planned with (a prompt smaller than the marker line, an assistant
   * message), L2 and L1 are trimmed again for what it sends; so the pack is over budget only
   * when L3, the live part and the pages alone do not fit, and the warning names them. Absent
   * (sessions recorded before the rule): the plan at the live floor stands.
   */
  strictBudget?: boolean;
}

const lines = new WeakMap<FoldedStep, string>();

/** A record's line in the L2 block; records never change, so each is rendered once. */
function recordLine(r: FoldedStep): string {
  let line = lines.get(r);
  if (line === undefined) {
    line = `${renderFoldedStep(r)}\n`;
    lines.set(r, line);
  }
  return line;
}

/** Tokens of one record line in the L2 block (memoised on the record object). */
export function recordTokens(meter: TokenMeter, r: FoldedStep): number {
  return meter.keyed(r, () => recordLine(r));
}

const FRAME_HEAD = `[system]\n${FOLDED_STEPS_HEADER}\n`;
const FRAME_TAIL = `${FOLDED_STEPS_FOOTER}\n\n`;

/** Tokens of the L2 block's frame (header and footer lines), paid once when L2 is not empty. */
export function frameTokens(meter: TokenMeter): number {
  return meter.text(FRAME_HEAD) + meter.text(FRAME_TAIL);
}

/** Tokens of a paged-in block as the pack places it (the block and its blank line). */
export function pageTokens(meter: TokenMeter, page: ArchivedBlockInfo): number {
  return meter.text(`${formatArchivedBlock(page)}\n\n`);
}

/** Tokens of a turn rendered verbatim (before any compression). */
export function turnTokens(t: Turn, meter: TokenMeter): number {
  let n = 0;
  for (const m of t.messages) n += meter.message(m);
  return n;
}

/** Tokens of the L3 layer after the latest-per-source rule. */
export function pinnedTokens(meter: TokenMeter, pinned: readonly PinnedItem[]): number {
  let n = 0;
  for (const p of latestPinned(pinned).kept) n += meter.message(p.message);
  return n;
}

/** Keeps the latest pinned note per source (the artifact strategy on L3). */
function latestPinned(pinned: readonly PinnedItem[]): {
  kept: PinnedItem[];
  notes: CompressionNote[];
} {
  const latest = new Map<string, number>();
  for (const p of pinned) if (p.source !== undefined) latest.set(p.source, p.id);
  const kept: PinnedItem[] = [];
  const notes: CompressionNote[] = [];
  for (const p of pinned) {
    const newest = p.source !== undefined ? latest.get(p.source) : undefined;
    if (p.kind === 'note' && newest !== undefined && newest !== p.id) {
      notes.push({
        strategy: 'latest_artifact_per_source',
        layer: 'L3',
        step_id: p.id,
        kept_step_id: newest,
        ...(p.source !== undefined ? { source: p.source } : {}),
        reason: 'a newer pinned note with the same source replaces it',
      });
      continue;
    }
    kept.push(p);
  }
  return { kept, notes };
}

/** Every part of a pack, measured once (tokens of immutable objects are memoised by the meter). */
interface Measured {
  l3: { kept: PinnedItem[]; notes: CompressionNote[]; tokens: number[]; total: number };
  lineTokens: number[];
  frame: number;
  recentTokens: number[];
  currentTokens: number;
  pages: (PackPage & { findings: PageFinding[] })[];
  blockTokens: number[];
  pageTotal: number;
}

const sum = (xs: readonly number[]): number => xs.reduce((a, b) => a + b, 0);

function measureLayers(input: AssembleInput): Measured {
  const { meter } = input;
  const l3 = latestPinned(input.pinned);
  const l3Tokens = l3.kept.map((p) => meter.message(p.message));
  const pages = input.pages.map((p) => ({ ...p, findings: p.findings ?? scanPage(p.content) }));
  const blockTokens = pages.map((p) => pageTokens(meter, p));
  return {
    l3: { ...l3, tokens: l3Tokens, total: sum(l3Tokens) },
    lineTokens: input.records.map((r) => recordTokens(meter, r)),
    frame: frameTokens(meter),
    recentTokens: input.recent.map((t) => turnTokens(t, meter)),
    currentTokens: input.current ? turnTokens(input.current, meter) : 0,
    pages,
    blockTokens,
    pageTotal: sum(blockTokens),
  };
}

/** What is left of L2 and L1 once the oldest items that do not fit are left out. */
interface Trimmed {
  records: readonly FoldedStep[];
  lineTokens: readonly number[];
  recent: readonly Turn[];
  truncated: TruncationNote[];
}

/** The note: a layer's oldest `what` left out of this pack only, over budget with `cause`. */
function leftOutOfPack(
  layer: TruncationNote['layer'],
  steps: number[],
  cause: string,
  what: string,
): TruncationNote {
  return {
    layer,
    steps,
    reason: `over budget with ${cause}: oldest ${what} left out of this pack only`,
    persistent: false,
  };
}

/**
 * Transient drops, for this pack only (the session's persistent window is already applied):
 * oldest records first (the frame goes with the last one), then oldest recent turns (whole
 * turns, so a call and its result go together). One pass over each layer.
 */
function trimToBudget(input: AssembleInput, m: Measured, liveSent?: number): Trimmed {
  const truncated: TruncationNote[] = [...(input.priorTruncated ?? [])];
  const l2 = m.lineTokens.length === 0 ? 0 : m.frame + sum(m.lineTokens);
  const task = input.live?.task ?? [];
  const isTask = input.recent.map((t) => task.includes(t));
  const live = m.currentTokens + sum(m.recentTokens.filter((_, i) => isTask[i]));
  let total = m.l3.total + l2 + sum(m.recentTokens) + m.currentTokens + m.pageTotal;
  // The live part plans with what it keeps: all of it, or (live rule, excerpt mode) at least
  // half of the room beside L3 and the pages, so L2 and L1 are not all given up to one output.
  total -= live - (liveSent ?? liveFloor(input, m, live));
  const r = dropOldest({ costs: m.lineTokens, total, budget: input.budget, lastExtra: m.frame });
  total = r.total;
  const dropped = new Set<number>();
  for (let i = 0; i < input.recent.length && total > input.budget; i++) {
    if (isTask[i]) continue;
    total -= m.recentTokens[i]!;
    dropped.add(i);
  }
  const records = input.records.slice(r.count);
  const recent = input.recent.filter((_, i) => !dropped.has(i));
  if (r.count > 0) {
    const steps = input.records.slice(0, r.count).map((x) => x.step_id);
    truncated.push(leftOutOfPack('L2', steps, 'this turn’s pages', 'records'));
  }
  if (dropped.size > 0) {
    const steps = input.recent.filter((_, i) => dropped.has(i)).flatMap((x) => x.steps);
    truncated.push(leftOutOfPack('L1', steps, 'L2 empty', 'recent turns'));
  }
  return { records, lineTokens: m.lineTokens.slice(r.count), recent, truncated };
}

/** Tokens the live part sends: L0 and the task turns, as cut when they are. */
function liveTokensSent(
  input: AssembleInput,
  m: Measured,
  t: Trimmed,
  cut: LiveCut | null,
): number {
  let n = cut ? sum(cut.current.tokens) : m.currentTokens;
  for (const x of input.live?.task ?? []) {
    const i = input.recent.indexOf(x);
    if (i < 0 || !t.recent.includes(x)) continue;
    const c = cut?.task.get(x);
    n += c ? sum(c.tokens) : m.recentTokens[i]!;
  }
  return n;
}

/** Tokens of a pack that keeps what `t` kept, with the live part sending `live` tokens. */
function packTotal(input: AssembleInput, m: Measured, t: Trimmed, live: number): number {
  const task = input.live?.task ?? [];
  const l2 = t.lineTokens.length === 0 ? 0 : m.frame + sum(t.lineTokens);
  let l1 = 0;
  for (const x of t.recent) if (!task.includes(x)) l1 += m.recentTokens[input.recent.indexOf(x)]!;
  return m.l3.total + l2 + l1 + live + m.pageTotal;
}

/**
 * The trim and the live cut, with `strictBudget`: while the cut live part sends more than the
 * trim planned with and L2 or L1 still hold something, trim again for what it sends. Each round
 * leaves out at least one more item, so it ends.
 */
function trimAndCut(input: AssembleInput, m: Measured): { trimmed: Trimmed; cut: LiveCut | null } {
  let trimmed = trimToBudget(input, m);
  let cut = liveExcerpt(input, m, trimmed);
  while (input.strictBudget) {
    const sent = liveTokensSent(input, m, trimmed, cut);
    if (packTotal(input, m, trimmed, sent) <= input.budget) break;
    const again = trimToBudget(input, m, sent);
    if (
      again.records.length === trimmed.records.length &&
      again.recent.length === trimmed.recent.length
    )
      break;
    trimmed = again;
    cut = liveExcerpt(input, m, trimmed);
  }
  return { trimmed, cut };
}

/** Tokens the live part is planned with (see `AssembleInput.live`). */
function liveFloor(input: AssembleInput, m: Measured, live: number): number {
  if (!input.live || (input.liveOverflow ?? 'excerpt') !== 'excerpt') return live;
  return Math.min(live, Math.max(0, Math.floor((input.budget - m.l3.total - m.pageTotal) / 2)));
}

/** The pack's messages and entries as they are appended, layer by layer. */
interface Parts {
  messages: Message[];
  entries: PackEntry[];
  /** Rendered text of L3 and L2: the prefix that stays stable between folds. */
  prefix: string;
  pagedIn: PagedInNote[];
}

function addPinned(parts: Parts, m: Measured): void {
  m.l3.kept.forEach((p, i) => {
    parts.messages.push(p.message);
    parts.entries.push({
      layer: 'L3',
      kind: p.kind,
      step_id: p.kind === 'system' ? p.id : null,
      steps: p.kind === 'system' ? [p.id] : [],
      tokens: m.l3.tokens[i]!,
    });
  });
  parts.prefix += renderMessages(m.l3.kept.map((p) => p.message));
}

function addFoldedSteps(parts: Parts, t: Trimmed, frame: number): void {
  if (t.records.length === 0) return;
  const text = t.records.map(recordLine).join('');
  parts.messages.push({
    role: 'system',
    content: `${FOLDED_STEPS_HEADER}\n${text}${FOLDED_STEPS_FOOTER}`,
  });
  parts.entries.push({
    layer: 'L2',
    kind: 'folded_steps_frame',
    step_id: null,
    steps: [],
    tokens: frame,
  });
  t.records.forEach((r, i) => {
    parts.entries.push({
      layer: 'L2',
      kind: 'folded_step',
      step_id: r.step_id,
      steps: [r.step_id],
      tokens: t.lineTokens[i]!,
    });
  });
  parts.prefix += FRAME_HEAD + text;
}

function addRecent(parts: Parts, turns: readonly PackTurn[], cut: LiveCut | null): void {
  for (const compressed of turns) {
    // A task turn cut with the live part is sent as cut (see `AssembleInput.live`).
    const pt = { ...compressed, ...cut?.task.get(compressed.turn) };
    parts.messages.push(...pt.messages);
    parts.entries.push({
      layer: 'L1',
      kind: 'turn',
      step_id: pt.turn.stepId,
      steps: [...pt.turn.steps],
      tokens: sum(pt.tokens),
    });
  }
}

/** L0: the live turn, with the paged-in blocks at the end of its last message. */
function addLive(
  parts: Parts,
  input: AssembleInput,
  m: Measured,
  excerpt: LiveExcerpt | null,
): void {
  const current = input.current;
  if (!current) return;
  const plain = excerpt
    ? [...excerpt.messages]
    : current.messages.map((x) => toPlainMessage(x as HistoryMessage));
  if (m.pages.length > 0) {
    // At the end of L0: the prompt, or the last pending tool output of a tool loop.
    const at = plain.length - 1;
    const last = plain[at]!;
    const blocks = m.pages.map((p) => formatArchivedBlock(p));
    plain[at] = { ...last, content: `${last.content}\n\n${blocks.join('\n\n')}` } as Message;
  }
  parts.messages.push(...plain);
  parts.entries.push({
    layer: 'L0',
    kind: input.currentIsPrompt ? 'prompt' : 'pending_tool_output',
    step_id: current.stepId,
    steps: [...current.steps],
    tokens: excerpt ? sum(excerpt.tokens) : m.currentTokens,
  });
  input.pages.forEach((p, i) => {
    const tokens = m.blockTokens[i]!;
    parts.entries.push({
      layer: 'L0',
      kind: 'page',
      step_id: p.step_id,
      steps: [p.step_id],
      tokens,
    });
    parts.pagedIn.push({
      step_id: p.step_id,
      payload_sha256: p.payload_sha256,
      chunk: p.chunk,
      chunks: p.chunks,
      truncated: p.truncated,
      tokens,
      matched_terms: [...p.matched_terms],
      findings: summarizeFindings(m.pages[i]!.findings),
    });
  });
}

/** The live part as sent after {@link excerptLive}: L0 (with every note), and each task turn. */
interface LiveCut {
  current: LiveExcerpt;
  task: Map<Turn, { messages: Message[]; tokens: number[] }>;
}

/**
 * The live part (L0, and the task turns of `input.live`) cut to what the budget leaves beside L3,
 * the pages and what L2 and L1 kept, when it does not fit. Null when it fits or is sent whole.
 */
function liveExcerpt(input: AssembleInput, m: Measured, t: Trimmed): LiveCut | null {
  const current = input.current;
  if (!current || (input.liveOverflow ?? 'excerpt') !== 'excerpt') return null;
  const task = (input.live?.task ?? []).filter((x) => t.recent.includes(x));
  const kept = t.recent.filter((x) => !task.includes(x));
  const l2 = t.lineTokens.length === 0 ? 0 : m.frame + sum(t.lineTokens);
  const l1 = sum(kept.map((x) => m.recentTokens[input.recent.indexOf(x)]!));
  const room = input.budget - m.l3.total - m.pageTotal - l2 - l1;
  const turns = [...task, current];
  const messages = turns.flatMap((x) => x.messages);
  const tokens = messages.map((x) => input.meter.message(x));
  if (sum(tokens) <= room) return null;
  const cut = excerptLive({
    messages: messages.map((x) => toPlainMessage(x as HistoryMessage)),
    steps: messages.map((x) => (x as HistoryMessage).stepId),
    tokens,
    room,
    budget: input.budget,
    meter: input.meter,
  });
  if (!cut) return null;
  const byTurn = new Map<Turn, { messages: Message[]; tokens: number[] }>();
  let at = 0;
  for (const x of turns) {
    const n = x.messages.length;
    byTurn.set(x, {
      messages: cut.messages.slice(at, at + n),
      tokens: cut.tokens.slice(at, at + n),
    });
    at += n;
  }
  const own = byTurn.get(current)!;
  byTurn.delete(current);
  return { current: { ...own, notes: cut.notes }, task: byTurn };
}

function excerptWarning(notes: readonly LiveExcerptNote[], live: number, budget: number): string {
  const steps = notes.map((n) => n.step_id).join(', ');
  const left = notes.reduce((a, n) => a + n.left_out_tokens, 0);
  return `live turn of ${live} tokens does not fit the ${budget}-token budget beside the pinned layer: step${notes.length > 1 ? 's' : ''} ${steps} sent as head and tail (${left} tokens left out of this call; the session keeps every byte)`;
}

/**
 * The over-budget warning of `strictBudget`: the parts the pack holds, with their tokens, as
 * they are (whatever L2 and L1 still hold is named too, so the cause is never guessed).
 */
function overBudgetWarning(
  tokens: number,
  budget: number,
  entries: readonly PackEntry[],
  excerpted: boolean,
): string {
  const of = (f: (e: PackEntry) => boolean): number => sum(entries.filter(f).map((e) => e.tokens));
  const live = of((e) => e.layer === 'L0' && e.kind !== 'page');
  const parts = [
    [of((e) => e.layer === 'L3'), 'the pinned layer (L3)'],
    [live, excerpted ? 'the live turn, cut as far as it goes' : 'the live turn'],
    [of((e) => e.layer === 'L1'), 'the live exchange’s earlier turns'],
    [of((e) => e.layer === 'L2'), 'folded-step records'],
    [of((e) => e.kind === 'page'), 'this turn’s pages'],
  ] as const;
  const named = parts.filter(([n]) => n > 0).map(([n, what]) => `${what}: ${n}`);
  return `pack is ${tokens} tokens, over the ${budget}-token budget: what it cannot leave out or cut further does not fit (${named.join('; ')})`;
}

/** Warnings and totals, from what the pack holds. */
function finishPack(
  input: AssembleInput,
  m: Measured,
  t: Trimmed,
  compressed: { turns: PackTurn[]; notes: CompressionNote[] },
  parts: Parts,
  excerpt: LiveExcerpt | null,
): ContextPack {
  const { budget } = input;
  const warnings = input.pageFailures.map(
    (f) =>
      `page-in of step ${f.step_id} refused (${f.error}: ${f.message}); the turn proceeds without it`,
  );
  const notes = excerpt?.notes ?? [];
  if (notes.length > 0) warnings.push(excerptWarning(notes, m.currentTokens, budget));
  const tokens = sum(parts.entries.map((e) => e.tokens));
  const overBudget = tokens > budget;
  if (overBudget) {
    warnings.push(
      input.strictBudget
        ? overBudgetWarning(tokens, budget, parts.entries, notes.length > 0)
        : `pack is ${tokens} tokens, over the ${budget}-token budget: L0 and L3 alone do not fit and are never dropped`,
    );
  }
  return {
    turn: input.turn,
    step_id: input.stepId,
    budget,
    tokenizer: input.meter.tokenizer.name,
    tokens,
    messages: parts.messages,
    entries: parts.entries,
    metadata: {
      baseline_tokens: tokens - m.pageTotal,
      page_tokens: m.pageTotal,
      stable_prefix_bytes: Buffer.byteLength(parts.prefix, 'utf8'),
      folded: input.folded.map((f) => ({ ...f })),
      paged_in: parts.pagedIn,
      page_failures: input.pageFailures.map((f) => ({ ...f })),
      compressed: [...(input.priorCompressed ?? []), ...m.l3.notes, ...compressed.notes],
      truncated: t.truncated,
      l2_steps: t.records.map((r) => r.step_id),
      l1_steps: compressed.turns.map((x) => x.turn.stepId),
      live_excerpts: notes.map((n) => ({ ...n })),
      warnings,
      over_budget: overBudget,
    },
  };
}

/**
 * Assembles a pack. Pure: the same input gives the same bytes. Order: L3, L2 (one system
 * message framing the records), L1, L0 (the prompt or pending tool output, with the paged-in
 * blocks at the end of its last message).
 * Over budget, records are dropped oldest first, then L1 turns oldest first (whole turns, so a
 * call and its result go together), for this pack only; L0 and L3 are never dropped. A live
 * turn that still does not fit is sent as head-and-tail excerpts of its oversized tool outputs
 * (then of the prompt) with a marker line, unless `liveOverflow: 'send-whole'`. Then the L1
 * compression strategies run on what is left. Every decision lands in `metadata`.
 *
 * @example
 * const pack = assemblePack({ turn: 0, stepId: 4, budget: 8000, meter, pinned: [], records: [], recent, current, currentIsPrompt: true, pages: [], pageFailures: [], folded: [] });
 */
export function assemblePack(input: AssembleInput): ContextPack {
  const m = measureLayers(input);
  const { trimmed, cut } = trimAndCut(input, m);
  const compressed = compressRecent(trimmed.recent, input.current, input.meter);
  const parts: Parts = { messages: [], entries: [], prefix: '', pagedIn: [] };
  addPinned(parts, m);
  addFoldedSteps(parts, trimmed, m.frame);
  addRecent(parts, compressed.turns, cut);
  addLive(parts, input, m, cut?.current ?? null);
  return finishPack(input, m, trimmed, compressed, parts, cut?.current ?? null);
}

/**
 * The pack as one text, the form `contextfold pack` prints and `pack_sha256` hashes. Its token
 * count is exactly `pack.tokens`.
 *
 * @example
 * renderPackText(pack).startsWith('[system]\n');
 */
export function renderPackText(pack: ContextPack): string {
  return renderMessages(pack.messages);
}

/**
 * SHA-256 of {@link renderPackText}: what the events record to prove replay equality.
 *
 * @example
 * const pack = await session.beforeTurn('Why did the migration fail?');
 * packSha256(pack) === sha256Hex(renderPackText(pack)); // true
 */
export function packSha256(pack: ContextPack): string {
  return sha256Hex(renderPackText(pack));
}
