import type { Message, ToolMessage } from './messages.js';
import { toPlainMessage } from './messages.js';
import type { TokenMeter } from './token-meter.js';
import type { Turn } from './turns.js';

/** A deterministic, rule-based compression (no model calls). */
export type CompressionStrategy =
  | 'duplicate_tool_log'
  | 'latest_artifact_per_source'
  | 'conversation_keep_last_n';

/** One compression decision, as reported in the pack metadata and the events. */
export interface CompressionNote {
  strategy: CompressionStrategy;
  layer: 'L1' | 'L2' | 'L3';
  /** The history position of the message (or note id for L3) that was compressed. */
  step_id: number;
  /** Where the kept copy is (the earlier identical output, or the newer artifact). */
  kept_step_id: number;
  source?: string;
  reason: string;
}

/** A turn as it appears in a pack: its messages, some possibly replaced by a short marker. */
export interface PackTurn {
  turn: Turn;
  messages: Message[];
  /** Tokens of each message as rendered (same order as `messages`). */
  tokens: number[];
}

const READ_TOOL_RE = /read|view|cat|open|show/i;
const PATH_KEYS = ['file_path', 'path', 'file', 'filename', 'notebook_path'];

/**
 * The artifact a tool result shows: its explicit `source`, else `file:<path>` for the result of
 * a read-like call that names a path. Results without one are never superseded.
 *
 * @example
 * sourceOf(turn, { role: 'tool', toolCallId: 'c1', content: '…' }); // 'file:src/a.ts'
 */
export function sourceOf(turn: Turn, m: ToolMessage): string | undefined {
  if (m.source) return m.source;
  if (!m.toolCallId) return undefined;
  for (const a of turn.messages) {
    if (a.role !== 'assistant') continue;
    const call = a.toolCalls?.find((c) => c.id === m.toolCallId);
    if (call) return artifactSource(call.name, call.input);
  }
  return undefined;
}

/**
 * The artifact a call's result shows: `file:<path>` for a read-like tool whose input names a
 * path, else undefined (adapters that know the call set it as a tool message's `source`).
 *
 * @example
 * artifactSource('Read', { file_path: 'src/a.ts' }); // 'file:src/a.ts'
 */
export function artifactSource(name: string, input: unknown): string | undefined {
  if (!READ_TOOL_RE.test(name) || input === null || typeof input !== 'object') return undefined;
  for (const k of PATH_KEYS) {
    const v = (input as Record<string, unknown>)[k];
    if (typeof v === 'string' && v) return `file:${v}`;
  }
  return undefined;
}

function replaced(m: ToolMessage, content: string): ToolMessage {
  return { ...m, content };
}

/**
 * Applies the L1 compression strategies to the recent turns, oldest first, and returns the
 * turns as they go into the pack plus one note per replaced message:
 * - latest artifact per source: an older output of a source that a later turn (L1 or the
 *   current turn) shows again is replaced by a pointer to the newer one;
 * - duplicate tool logs: a tool output identical to an earlier one still in the pack is
 *   replaced by a pointer to the earlier one.
 * A marker replaces only the content, so a call and its result stay together, and only when
 * it is shorter than what it replaces. Same input, same output.
 *
 * @example
 * const { turns, notes } = compressRecent(recent, current, meter);
 */
export function compressRecent(
  recent: readonly Turn[],
  current: Turn | null,
  meter: TokenMeter,
): { turns: PackTurn[]; notes: CompressionNote[] } {
  const latestBySource = new Map<string, number>();
  const all = current ? [...recent, current] : recent;
  for (const t of all) {
    for (const m of t.messages) {
      if (m.role !== 'tool') continue;
      const src = sourceOf(t, m);
      if (src !== undefined) latestBySource.set(src, m.stepId);
    }
  }
  const firstByContent = new Map<string, number>();
  const notes: CompressionNote[] = [];
  const turns: PackTurn[] = [];
  for (const t of recent) {
    const messages: Message[] = [];
    const tokens: number[] = [];
    for (const m of t.messages) {
      const plain = toPlainMessage(m);
      // Counted on the history object itself, which the meter caches for the session's life.
      const own = meter.message(m);
      if (m.role !== 'tool' || plain.role !== 'tool') {
        messages.push(plain);
        tokens.push(own);
        continue;
      }
      // A marker replaces the output only when it costs fewer tokens than the output.
      const useMarker = (text: string, note: CompressionNote): boolean => {
        const marker = replaced(plain, text);
        const n = meter.message(marker);
        if (n >= own) return false;
        messages.push(marker);
        tokens.push(n);
        notes.push(note);
        return true;
      };
      const src = sourceOf(t, m);
      const newer = src !== undefined ? latestBySource.get(src) : undefined;
      if (
        src !== undefined &&
        newer !== undefined &&
        newer > m.stepId &&
        useMarker(`[superseded: a newer output of ${src} is at step ${newer}]`, {
          strategy: 'latest_artifact_per_source',
          layer: 'L1',
          step_id: m.stepId,
          kept_step_id: newer,
          source: src,
          reason: 'a newer output of the same source is in the pack',
        })
      ) {
        continue;
      }
      const earlier = firstByContent.get(m.content);
      if (earlier !== undefined) {
        const note: CompressionNote = {
          strategy: 'duplicate_tool_log',
          layer: 'L1',
          step_id: m.stepId,
          kept_step_id: earlier,
          reason: 'identical to an earlier tool output in the pack',
        };
        if (useMarker(`[duplicate tool output: identical to the result at step ${earlier}]`, note))
          continue;
      } else {
        firstByContent.set(m.content, m.stepId);
      }
      messages.push(plain);
      tokens.push(own);
    }
    turns.push({ turn: t, messages, tokens });
  }
  return { turns, notes };
}
