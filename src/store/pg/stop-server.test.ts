import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import pg from 'pg';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { ContextFold } from '../../engine/context-fold.js';
import type { FoldInput } from '../../engine/types.js';
import { isContextFoldError } from '../../protocol/errors.js';
import { describePg } from '../../test-utils/pg.js';
import { type PgCluster, startPgCluster } from '../../test-utils/pg-cluster.js';
import { seededRandom, sleep } from '../../test-utils/seeded.js';

// The server stopped under folds in flight (kill-connection.test.ts terminates connections
// instead). A cluster of its own: stopping the run's shared server would fail other files.
// Each cycle starts one fold in each of ENGINES engines (separate pools, as separate processes:
// one holds the store's lock, the others wait for it), stops the server at a random moment, half
// the cycles cleanly (`fast`) and half as a crash (`immediate`, recovery on restart), checks what
// the clients saw and what the database kept, starts the server again and folds again.
// CI runs CYCLES × ENGINES = 12 stop points; CONTEXTFOLD_TEST_FULL=1 runs 60.
const FULL = process.env.CONTEXTFOLD_TEST_FULL === '1';
const CYCLES = FULL ? 20 : 4;
const ENGINES = 3;
const BATCH = 48;
const STORE = 'stopped';

let cluster: PgCluster | null = null;
let url = '';
beforeAll(async () => {
  // As root the server runs as another user, who cannot enter the run's private temp dir.
  const parent = process.env.CONTEXTFOLD_TEST_REAL_TMP ?? tmpdir();
  cluster = await startPgCluster(mkdtempSync(join(parent, 'contextfold-test-stop-pg-')), {
    durableCommits: true, // a crash must not lose a commit the client was told about
  });
  url = `${cluster.url}?store_id=${STORE}`;
}, 120_000);
afterAll(() => {
  cluster?.stop();
});

/** Engine `e`'s batch of cycle `k`: its own steps, so engines never conflict. */
function batch(k: number, e: number): FoldInput[] {
  const first = (k * ENGINES + e) * BATCH;
  return Array.from({ length: BATCH }, (_, i) => {
    const step = first + i;
    return {
      stepId: step,
      summary: `turn ${step} restarted worker-${step} on port ${5000 + (step % 900)}`,
      content: `$ systemctl restart worker-${step}\nactive (running) on ${5000 + (step % 900)}\n${'journal line\n'.repeat(30)}`,
    };
  });
}

/** The store's row counts: a node without its entry or feed row would be a partial fold. */
async function counts(): Promise<Record<string, number>> {
  const c = new pg.Client({ connectionString: cluster!.url });
  await c.connect();
  try {
    const r = await c.query(
      `SELECT (SELECT count(*) FROM cf_nodes WHERE store_id = $1)::int AS nodes,
              (SELECT count(*) FROM cf_entries WHERE store_id = $1)::int AS entries,
              (SELECT count(*) FROM cf_changes WHERE store_id = $1)::int AS changes,
              (SELECT coalesce(max(seq), 0) FROM cf_stores WHERE store_id = $1)::int AS seq`,
      [STORE],
    );
    return r.rows[0];
  } finally {
    await c.end();
  }
}

/** The error a client saw: one line, the store's, naming it; never a bare driver error. */
function expectUnavailable(e: unknown): { committed?: string } {
  expect(isContextFoldError(e), String(e)).toBe(true);
  const err = e as { code: string; message: string; details: { committed?: string } };
  expect(err.code, err.message).toBe('STORE_UNAVAILABLE');
  expect(err.message).toContain(`store_id=${STORE}`);
  expect(err.message).not.toContain('\n');
  return err.details;
}

describePg('folds in flight while the PostgreSQL server is stopped', () => {
  it(`${CYCLES * ENGINES} stop points: one clear error, nothing partial or lost after restart, the next fold succeeds`, async () => {
    const opts = { store: url, tokenizer: 'reference' as const, clock: () => new Date(0) };
    const engines = await Promise.all(
      Array.from({ length: ENGINES }, () => ContextFold.open({ ...opts, lockTimeoutMs: 20_000 })),
    );
    // The store exists before the first stop (its creation is not what is tested here).
    await engines[0]!.fold({ stepId: 1_000_000, summary: 'seed', content: 'seed' });
    const next = seededRandom(2026);
    const reported = new Set<number>([1_000_000]);
    let interrupted = 0;
    let unknownCommit = 0;
    let completed = 0;
    // How long ENGINES folds take together here, without a stop: the stop moments are spread
    // over that window (and a little past it, so some stops find every fold committed).
    const t0 = performance.now();
    await Promise.all(engines.map((cf, e) => cf.foldMany(batch(CYCLES, e))));
    const span = performance.now() - t0;
    for (const e of engines.keys()) for (const i of batch(CYCLES, e)) reported.add(i.stepId);
    const delays: number[] = [];
    for (let k = 0; k < CYCLES; k++) {
      const mode = k % 2 === 0 ? 'fast' : 'immediate';
      const inputs = engines.map((_, e) => batch(k, e));
      const folds = engines.map((cf, e) =>
        cf.foldMany(inputs[e]!).then(
          (r) => ({ ok: true as const, r }),
          (err: unknown) => ({ ok: false as const, err }),
        ),
      );
      delays.push(Math.round(next() * span * 1.2));
      await sleep(delays.at(-1)!);
      cluster!.stopServer(mode);
      const outs = await Promise.all(folds);
      for (const out of outs) {
        if (out.ok) {
          completed++;
          for (const r of out.r) reported.add(r.step_id);
        } else {
          interrupted++;
          if (expectUnavailable(out.err).committed === 'unknown') unknownCommit++;
        }
      }
      // While the server is down: a fold is refused at once with the same error, a read too.
      const down = await engines[0]!
        .fold({ stepId: 2_000_000 + k, summary: 'x', content: 'x' })
        .then(
          () => null,
          (e: unknown) => e,
        );
      expectUnavailable(down);
      expectUnavailable(
        await engines[1]!.status().then(
          () => null,
          (e: unknown) => e,
        ),
      );
      cluster!.startServer();
      // After the restart: every node has its entry and feed row, and every fold the clients
      // were told had committed is there.
      const c = await counts();
      expect(c.nodes).toBe(c.entries);
      expect(c.changes).toBe(c.entries);
      expect(c.seq).toBe(c.changes);
      const fresh = await ContextFold.open({ ...opts, mustExist: true });
      for (const s of reported) expect(await fresh.entry(s), `step ${s}`).toBeDefined();
      await fresh.close();
      // The same engines fold again (the interrupted batches; a committed one is a no-op).
      for (const [e, cf] of engines.entries()) {
        const again = await cf.foldMany(inputs[e]!);
        expect(again.map((r) => r.step_id)).toEqual(inputs[e]!.map((i) => i.stepId));
        for (const r of again) reported.add(r.step_id);
      }
    }
    // Enough of the stops landed inside a fold for the test to mean something.
    expect(interrupted).toBeGreaterThanOrEqual((CYCLES * ENGINES) / 4);
    for (const cf of engines) await cf.close();
    const total = (CYCLES + 1) * ENGINES * BATCH + 1;
    expect(await counts()).toEqual({ nodes: total, entries: total, changes: total, seq: total });
    const fresh = await ContextFold.open({ ...opts, mustExist: true });
    expect((await fresh.entries()).length).toBe(total);
    const v = await fresh.validate();
    expect(v.problems).toEqual([]);
    expect(v.checked).toBe(total);
    await fresh.close();
    console.log(
      `[stop-server] ${CYCLES} stops (fast and immediate) × ${ENGINES} folds in flight = ${CYCLES * ENGINES} stop points: ${interrupted} interrupted a fold (${unknownCommit} during its commit), ${completed} had committed before the stop; folds took ${Math.round(span)} ms, stops after ${delays.join(', ')} ms`,
    );
  }, 300_000);
});
