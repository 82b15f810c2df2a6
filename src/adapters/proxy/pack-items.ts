import type { Message } from '../../harness/messages.js';
import type { ContextPack, PackEntry } from '../../harness/pack.js';

/** One message of a pack, with what it stands for. */
export type PackItem =
  /** L3: a system message of the history (its step) or a pinned note (null). */
  | { kind: 'pinned'; step: number | null; message: Message }
  /** L2: the folded-step records block. */
  | { kind: 'folded'; message: Message }
  /**
   * L1 / L0: a history message as the pack has it (possibly compressed, or with pages).
   * `excerpt`: a live message cut to its head and tail to fit the budget (send it as it is).
   */
  | { kind: 'step'; step: number; message: Message; excerpt: boolean };

type Tag =
  | { kind: 'pinned'; step: number | null }
  | { kind: 'folded' }
  | { kind: 'step'; step: number };

/** The tags of the messages an entry contributes (folded-step lines and pages add none). */
function tags(e: PackEntry): Tag[] {
  switch (e.kind) {
    case 'system':
    case 'note':
      return [{ kind: 'pinned', step: e.step_id }];
    case 'folded_steps_frame':
      return [{ kind: 'folded' }];
    case 'turn':
    case 'prompt':
    case 'pending_tool_output':
      return e.steps.map((step) => ({ kind: 'step', step }));
    default:
      return [];
  }
}

/**
 * The pack's messages with what each stands for, in pack order (L3, L2, L1, L0). Throws when
 * the entries do not account for every message (a harness bug: nothing is sent then).
 *
 * @example
 * packItems(pack).filter((i) => i.kind === 'step').map((i) => i.step); // history steps sent
 */
export function packItems(pack: ContextPack): PackItem[] {
  const all = pack.entries.flatMap(tags);
  if (all.length !== pack.messages.length) {
    throw new Error(
      `pack of turn ${pack.turn}: ${all.length} entries for ${pack.messages.length} messages`,
    );
  }
  const cut = new Set(pack.metadata.live_excerpts.map((e) => e.step_id));
  return pack.messages.map((message, i) => {
    const tag = all[i]!;
    return (
      tag.kind === 'step' ? { ...tag, message, excerpt: cut.has(tag.step) } : { ...tag, message }
    ) as PackItem;
  });
}

/** How the pack changed a history message it sends. */
export type StepChange =
  | { kind: 'same' }
  /** This call's paged-in blocks, to add after the message's own content. */
  | { kind: 'pages'; text: string }
  /** The content was replaced (a compressed tool output: a pointer to the kept copy). */
  | { kind: 'replaced'; content: string };

/**
 * Compares a message as the pack sends it with the history message it stands for.
 *
 * @example
 * stepChange({ role: 'user', content: 'q\n\n<archived_record …' }, { role: 'user', content: 'q' }); // pages
 */
export function stepChange(packed: Message, original: Message): StepChange {
  if (packed.content === original.content) return { kind: 'same' };
  const head = `${original.content}\n\n`;
  if (packed.content.startsWith(`${head}<archived_record `)) {
    return { kind: 'pages', text: packed.content.slice(head.length) };
  }
  return { kind: 'replaced', content: packed.content };
}
