import type { ContextPack } from '../harness/pack.js';
import type { SessionEvent } from '../harness/session-events.js';
import type { LayerTokens, TimelineRow } from './api-types.js';

/** Tokens of a pack by layer, pages apart from the rest of L0. */
export function layerTokens(pack: ContextPack): LayerTokens {
  const t: LayerTokens = { L3: 0, L2: 0, L1: 0, L0: 0, pages: 0 };
  for (const e of pack.entries) {
    if (e.kind === 'page') t.pages += e.tokens;
    else t[e.layer] += e.tokens;
  }
  return t;
}

function emptyRow(turn: number): TimelineRow {
  return {
    turn,
    step_id: -1,
    tokens: 0,
    baseline_tokens: 0,
    budget: 0,
    over_budget: false,
    pack_sha256: '',
    layers: null,
    folded: [],
    paged_in: [],
    refused: [],
    evicted: [],
    compressed: [],
    truncated: [],
    warnings: [],
  };
}

/** Adds one turn-scoped event to its row. */
function addEvent(row: TimelineRow, e: SessionEvent): void {
  switch (e.type) {
    case 'fold':
      row.folded.push({ step_id: e.step_id, reason: e.reason, steps: [...e.steps] });
      return;
    case 'window':
      row.truncated.push({
        layer: e.layer,
        steps: [...e.dropped_steps],
        persistent: true,
        reason: e.reason,
      });
      return;
    case 'page_in':
      row.paged_in.push({
        step_id: e.step_id,
        tokens: e.tokens,
        matched_terms: [...e.matched_terms],
        truncated: e.truncated,
      });
      return;
    case 'page_failed':
      row.refused.push({ step_id: e.step_id, error: e.error, message: e.message });
      return;
    case 'compress':
      for (const n of e.notes) {
        row.compressed.push({
          strategy: n.strategy,
          layer: n.layer,
          step_id: n.step_id,
          kept_step_id: n.kept_step_id,
        });
      }
      return;
    case 'truncate':
      for (const n of e.notes) {
        row.truncated.push({
          layer: n.layer,
          steps: [...n.steps],
          persistent: n.persistent,
          reason: n.reason,
        });
      }
      return;
    case 'pack_built':
      row.step_id = e.step_id;
      row.tokens = e.tokens;
      row.baseline_tokens = e.baseline_tokens;
      row.budget = e.budget;
      row.over_budget = e.over_budget;
      row.pack_sha256 = e.pack_sha256;
      row.warnings = [...e.warnings];
      return;
    case 'evict':
      row.evicted.push(e.step_id);
      return;
    default:
      return;
  }
}

/**
 * The session timeline: one row per pack, from the recorded events alone (what was folded,
 * paged in with its matched keys, refused, compressed, truncated, evicted), with the tokens by
 * layer from the replayed packs when given (the events record only totals). A turn whose pack
 * was never built (an interrupted run) still gets its row, with `step_id` -1.
 *
 * @example
 * const rows = timelineRows(readEvents(dir), layersByTurn);
 */
export function timelineRows(
  events: readonly SessionEvent[],
  layers: ReadonlyMap<number, LayerTokens> | null,
): TimelineRow[] {
  const rows: TimelineRow[] = [];
  for (const e of events) {
    if (e.type === 'turn_started') {
      rows[e.turn] = emptyRow(e.turn);
      continue;
    }
    if (!('turn' in e)) continue;
    const row = rows[e.turn];
    if (row) addEvent(row, e);
  }
  const out = rows.filter((r): r is TimelineRow => r !== undefined);
  for (const r of out) r.layers = layers?.get(r.turn) ?? null;
  return out;
}
