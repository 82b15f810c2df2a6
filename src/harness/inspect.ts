import type { ContextFoldEngine } from '../engine/types.js';
import type { ContextPack } from './pack.js';

/**
 * Renders a pack for a person (the developer view): budget, layers, what was folded, paged in,
 * compressed and truncated, and the warnings. Reading never changes anything: the next pack is
 * byte-identical whether or not this ran (CONF-08).
 *
 * @example
 * console.log(renderPackForHuman(pack));
 */
export function renderPackForHuman(pack: ContextPack): string {
  const m = pack.metadata;
  const lines: string[] = [];
  lines.push(
    `turn ${pack.turn} · prompt at step ${pack.step_id} · ${pack.tokens}/${pack.budget} tokens (${pack.tokenizer})` +
      ` · baseline ${m.baseline_tokens} + pages ${m.page_tokens}`,
  );
  for (const layer of ['L3', 'L2', 'L1', 'L0'] as const) {
    const entries = pack.entries.filter((e) => e.layer === layer);
    const tokens = entries.reduce((a, e) => a + e.tokens, 0);
    const steps = entries.flatMap((e) => (e.step_id === null ? [] : [e.step_id]));
    const list =
      steps.length > 12
        ? `${steps.slice(0, 12).join(', ')}, … (${steps.length})`
        : steps.join(', ');
    lines.push(
      `  ${layer}: ${entries.length} entries, ${tokens} tokens${list ? ` — steps ${list}` : ''}`,
    );
  }
  if (m.folded.length > 0) {
    lines.push(`  folded now: ${m.folded.map((f) => `${f.step_id} (${f.reason})`).join(', ')}`);
  }
  for (const p of m.paged_in) {
    lines.push(
      `  paged in: step ${p.step_id} (${p.tokens} tokens, chunk ${p.chunk + 1}/${p.chunks}${p.truncated ? ', truncated' : ''}) ← ${p.matched_terms.join(', ')}`,
    );
  }
  for (const c of m.compressed) {
    lines.push(
      `  compressed: ${c.strategy} on ${c.layer} step ${c.step_id} (kept ${c.kept_step_id}): ${c.reason}`,
    );
  }
  for (const t of m.truncated) {
    lines.push(
      `  truncated ${t.layer}${t.persistent ? '' : ' (this pack only)'}: ${t.steps.length} step(s): ${t.reason}`,
    );
  }
  for (const w of m.warnings) lines.push(`  warning: ${w}`);
  return lines.join('\n');
}

/**
 * Renders one cold node for a person: the verified payload (hash-checked), its step and hash.
 * Read-only: it neither pages the node into a prompt nor marks it evicted (CONF-08).
 *
 * @example
 * console.log(await inspectColdNode(engine, 137));
 */
export async function inspectColdNode(engine: ContextFoldEngine, stepId: number): Promise<string> {
  const bytes = await engine.hydrateBytes(stepId);
  const entry = (await engine.entries()).find((e) => e.step_id === stepId);
  const text = new TextDecoder('utf-8', { fatal: false }).decode(bytes);
  return [
    `step ${stepId} · payload_sha256 ${entry?.payload_sha256 ?? '?'} · ${bytes.length} bytes · verified`,
    `summary: ${entry?.summary ?? ''}`,
    '',
    text,
  ].join('\n');
}
