import { mkdirSync, readdirSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import { buildNode } from '../engine/build-node.js';
import type { FoldInput } from '../engine/types.js';
import { appendDurable, writeFilesDurable } from '../fs/durable-fs.js';
import { canonicalJson, prettyJson } from '../protocol/canonical-json.js';
import { DEFAULT_POLICY } from '../protocol/policy.js';
import { indexEntryFor } from '../store/cold-node.js';

/** Turns written per durable round, as a fold batch commits them (see `FOLD_ROUND`). */
const ROUND = 1024;

/** What {@link durableFloorProbe} measured, per turn (ms). */
export interface DurableFloor {
  turns: number;
  /** Building, serialising and writing, wall time. */
  per_turn_ms: number;
  cpu_per_turn_ms: number;
  /** Building the nodes (projection, hashes) and serialising them and their journal lines. */
  build_per_turn_ms: number;
  /** Writing the node files and the journal durably (temp files, fsyncs, renames). */
  write_per_turn_ms: number;
  /** Node files found written before the probe removed them (equals `turns`). */
  files: number;
}

/**
 * The part of a fold no index design can avoid, measured on this machine: each input built into
 * its cold node (projection and the three hashes, no redaction), serialised as the store writes
 * it, and written the way a fold writes it (node files durably per round of 1,024, a journal line
 * each, fsynced per round), with no derived index and no analysis, on one thread. `foldMany`'s
 * figure reads against it: what it costs beyond this is the index, the analysis and the
 * redaction. Writes under a new directory of `parent` and removes it.
 *
 * @example
 * durableFloorProbe(tmpdir(), inputs.slice(0, 2048)); // { turns: 2048, per_turn_ms: 1.2, … }
 */
export async function durableFloorProbe(
  parent: string,
  inputs: readonly FoldInput[],
): Promise<DurableFloor> {
  const dir = join(parent, `.durable-floor-probe-${process.pid}`);
  const nodes = join(dir, 'cold_nodes');
  mkdirSync(nodes, { recursive: true });
  const ctx = {
    policy: DEFAULT_POLICY,
    sessionId: 'default-session',
    foldedAt: '2026-01-01T00:00:00Z',
    sanitized: false,
  };
  try {
    let build = 0;
    let write = 0;
    const cpu0 = process.cpuUsage();
    for (let i = 0; i < inputs.length; i += ROUND) {
      const t0 = performance.now();
      const files: { path: string; data: string }[] = [];
      let journal = '';
      for (const input of inputs.slice(i, i + ROUND)) {
        const { node } = buildNode(input, [], ctx);
        const name = `step_${node.step_id}.json`;
        files.push({ path: join(nodes, name), data: prettyJson(node) });
        const entry = indexEntryFor(node, `cold_nodes/${name}`);
        journal += `${canonicalJson({ op: 'fold', entry })}\n`;
      }
      const t1 = performance.now();
      await writeFilesDurable(files);
      appendDurable(join(dir, 'journal.jsonl'), journal);
      build += t1 - t0;
      write += performance.now() - t1;
    }
    const cpu = process.cpuUsage(cpu0);
    const n = Math.max(1, inputs.length);
    const per = (ms: number) => Number((ms / n).toFixed(3));
    return {
      turns: inputs.length,
      per_turn_ms: per(build + write),
      cpu_per_turn_ms: per((cpu.user + cpu.system) / 1000),
      build_per_turn_ms: per(build),
      write_per_turn_ms: per(write),
      files: readdirSync(nodes).length,
    };
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}
