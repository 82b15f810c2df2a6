import pg from 'pg';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { ContextFold } from '../../engine/context-fold.js';
import type { FoldInput } from '../../engine/types.js';
import { isContextFoldError } from '../../protocol/errors.js';
import { describePg, PG_URL } from '../../test-utils/pg.js';
import { seededRandom, sleep } from '../../test-utils/seeded.js';
import { parsePgUrl } from './pg-url.js';

/** Kill points; each one terminates the writer's connection at a random moment of a fold. */
const POINTS = 60;
const BATCH = 64;
const DB = `kill_${process.pid}`;

let admin: pg.Client;
let url = '';
beforeAll(async () => {
  if (!PG_URL) return;
  admin = new pg.Client({ connectionString: PG_URL });
  await admin.connect();
  // A database of its own: terminating its connections cannot touch another test's.
  await admin.query(`DROP DATABASE IF EXISTS ${DB}`);
  await admin.query(`CREATE DATABASE ${DB}`);
  url = `${PG_URL.replace(/\/contextfold$/, `/${DB}`)}?store_id=killed`;
});
afterAll(async () => {
  if (!admin) return;
  await admin.query(`DROP DATABASE IF EXISTS ${DB} WITH (FORCE)`);
  await admin.end();
});

function batch(k: number): FoldInput[] {
  return Array.from({ length: BATCH }, (_, i) => {
    const step = k * BATCH + i;
    return {
      stepId: step,
      summary: `turn ${step} configured service-${step} on port ${4000 + (step % 1000)}`,
      content: `$ deploy service-${step}\nlistening on ${4000 + (step % 1000)}\n${'log line\n'.repeat(40)}`,
    };
  });
}

async function terminateAll(): Promise<number> {
  const r = await admin.query(
    'SELECT count(pg_terminate_backend(pid)) AS n FROM pg_stat_activity WHERE datname = $1 AND pid <> pg_backend_pid()',
    [DB],
  );
  return Number(r.rows[0].n);
}

describePg('a fold whose connection is terminated mid-way', () => {
  it(`${POINTS} random kill points: all or nothing, no reported fold lost, the next fold succeeds`, async () => {
    const cf = await ContextFold.open({
      store: url,
      tokenizer: 'reference',
      clock: () => new Date(0),
    });
    const next = seededRandom(16);
    const reported = new Set<number>();
    let interrupted = 0;
    let unknownCommit = 0;
    for (let k = 0; k < POINTS; k++) {
      const inputs = batch(k);
      const fold = cf.foldMany(inputs).then(
        (r) => ({ ok: true as const, r }),
        (e: unknown) => ({ ok: false as const, e }),
      );
      await sleep(next() * 25);
      await terminateAll();
      const out = await fold;
      if (out.ok) {
        for (const r of out.r) reported.add(r.step_id);
      } else {
        interrupted++;
        // A clear error: the store's, naming it; never a crash or a bare driver error.
        expect(isContextFoldError(out.e), String(out.e)).toBe(true);
        const e = out.e as { code: string; message: string; details: { committed?: string } };
        expect(e.code).toBe('STORE_UNAVAILABLE');
        expect(e.message).toContain('store_id=killed');
        if (e.details.committed === 'unknown') unknownCommit++;
      }
      // The server is still up: the next fold (the same batch again) succeeds at once.
      const again = await cf.foldMany(inputs);
      expect(again.map((r) => r.step_id)).toEqual(inputs.map((i) => i.stepId));
      for (const r of again) reported.add(r.step_id);
    }
    // Enough of the kills landed inside a fold for the test to mean something.
    expect(interrupted).toBeGreaterThanOrEqual(POINTS / 4);
    await cf.close();
    // Another process's view: every reported fold present, nodes and entries in step, valid.
    const fresh = await ContextFold.open({ store: url, tokenizer: 'reference', mustExist: true });
    const entries = await fresh.entries();
    expect(entries.length).toBe(POINTS * BATCH);
    for (const s of reported) expect(await fresh.entry(s)).toBeDefined();
    const id = parsePgUrl(url).storeId;
    const c = new pg.Client({ connectionString: url.replace(/\?.*$/, '') });
    await c.connect();
    const counts = await c.query(
      `SELECT (SELECT count(*) FROM cf_nodes WHERE store_id = $1) AS nodes,
              (SELECT count(*) FROM cf_entries WHERE store_id = $1) AS entries,
              (SELECT count(*) FROM cf_changes WHERE store_id = $1) AS changes,
              (SELECT seq FROM cf_stores WHERE store_id = $1) AS seq`,
      [id],
    );
    await c.end();
    // No partial fold: every node has its entry and its feed row, and the feed has no gap.
    expect(counts.rows[0]).toEqual({
      nodes: String(POINTS * BATCH),
      entries: String(POINTS * BATCH),
      changes: String(POINTS * BATCH),
      seq: String(POINTS * BATCH),
    });
    const v = await fresh.validate();
    expect(v.problems).toEqual([]);
    expect(v.checked).toBe(POINTS * BATCH);
    await fresh.close();
    console.log(
      `[kill-connection] ${POINTS} kill points: ${interrupted} interrupted a fold (${unknownCommit} during its commit), ${POINTS - interrupted} came after it committed`,
    );
  });
});
