import { findArchivedBlocks } from '../harness/archived-block.js';
import type { Message } from '../harness/messages.js';
import { type ContextPack, type PackEntry, packSha256 } from '../harness/pack.js';
import { messageBody, messageHeader } from '../harness/render.js';
import type { PackLayerView, PackMessageView, PackResponse, PackSegment } from './api-types.js';

const LAYER_ORDER = ['L3', 'L2', 'L1', 'L0'] as const;

/** How many of the pack's messages an entry accounts for (pages live inside the prompt). */
function messageCount(e: PackEntry): number {
  switch (e.kind) {
    case 'system':
    case 'note':
    case 'folded_steps_frame':
      return 1;
    case 'turn':
    case 'prompt':
    case 'pending_tool_output':
      return e.steps.length;
    default:
      return 0;
  }
}

/** A message body split into plain text and the archived blocks paged into it. */
export function bodySegments(body: string): PackSegment[] {
  const out: PackSegment[] = [];
  let pos = 0;
  for (const b of findArchivedBlocks(body)) {
    if (b.start > pos) out.push({ kind: 'text', text: body.slice(pos, b.start), step_id: null });
    out.push({ kind: 'archived', text: body.slice(b.start, b.end), step_id: b.step_id });
    pos = b.end;
  }
  if (pos < body.length || out.length === 0)
    out.push({ kind: 'text', text: body.slice(pos), step_id: null });
  return out;
}

function messageView(m: Message): PackMessageView {
  return { role: m.role, header: messageHeader(m), segments: bodySegments(messageBody(m)) };
}

/**
 * Groups a pack's messages by layer, in prompt order (L3, L2, L1, L0), from its entries: each
 * system message or note is one message, the L2 block one, each turn one per step. Throws if
 * the entries do not account for exactly the pack's messages (a bug, never papered over).
 */
export function packLayers(pack: ContextPack): PackLayerView[] {
  const layers: PackLayerView[] = LAYER_ORDER.map((layer) => ({
    layer,
    tokens: 0,
    entries: [],
    messages: [],
  }));
  let next = 0;
  for (const e of pack.entries) {
    const view = layers[LAYER_ORDER.indexOf(e.layer)]!;
    view.tokens += e.tokens;
    view.entries.push({ kind: e.kind, step_id: e.step_id, tokens: e.tokens });
    for (let k = messageCount(e); k > 0; k--) {
      const m = pack.messages[next++];
      if (!m) break;
      view.messages.push(messageView(m));
    }
  }
  if (next !== pack.messages.length) {
    throw new Error(
      `pack of turn ${pack.turn}: its entries account for ${next} of ${pack.messages.length} messages`,
    );
  }
  return layers;
}

/**
 * The pack view: the pack as sent, by layer, with archived blocks marked, and how it was built.
 * `recordedSha256` is what the session recorded for this turn, so the view says whether the
 * rebuilt pack is the one that was sent.
 */
export function packView(pack: ContextPack, recordedSha256: string | null): PackResponse {
  const { metadata: m } = pack;
  const sha = packSha256(pack);
  const {
    paged_in: _p,
    page_failures: _f,
    warnings: _w,
    baseline_tokens: _b,
    page_tokens: _t,
    ...rest
  } = m;
  return {
    turn: pack.turn,
    step_id: pack.step_id,
    tokens: pack.tokens,
    budget: pack.budget,
    tokenizer: pack.tokenizer,
    baseline_tokens: m.baseline_tokens,
    page_tokens: m.page_tokens,
    pack_sha256: sha,
    matches_recorded: recordedSha256 === sha,
    layers: packLayers(pack),
    paged_in: m.paged_in.map((p) => ({
      step_id: p.step_id,
      tokens: p.tokens,
      matched_terms: [...p.matched_terms],
      truncated: p.truncated,
    })),
    refused: m.page_failures.map((f) => ({
      step_id: f.step_id,
      error: f.error,
      message: f.message,
    })),
    warnings: [...m.warnings],
    metadata: rest as Record<string, unknown>,
  };
}
