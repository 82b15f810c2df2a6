import { join } from 'node:path';
import pg from 'pg';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { ContextFold } from '../../engine/context-fold.js';
import { sha256Hex } from '../../protocol/canonical-json.js';
import { describePg, PG_URL, pgStoreUrl } from '../../test-utils/pg.js';
import { tempDir } from '../../test-utils/temp-dir.js';
import { PG_SCHEMA_VERSION } from './pg-schema.js';
import { parsePgUrl } from './pg-url.js';

const clock = () => new Date('2026-03-01T10:00:00Z');
const turns = [
  { stepId: 3, summary: 'PostgreSQL configured on port 5433', content: '$ psql -p 5433\r\nok\r\n' },
  { stepId: 4, summary: 'binary blob', content: Uint8Array.from([0x66, 0x80, 0xff, 0x00, 0x0a]) },
  {
    stepId: 9,
    summary: 'deploy failed with ECONNREFUSED',
    content: 'Error: ECONNREFUSED 10.0.0.7:6379\n',
  },
];

let admin: pg.Client;
beforeAll(async () => {
  if (!PG_URL) return;
  admin = new pg.Client({ connectionString: PG_URL });
  await admin.connect();
});
afterAll(async () => {
  await admin?.end();
});

/** Runs SQL on the run's database as the superuser (the "behind the engine's back" editor). */
async function sql(text: string, params: unknown[] = []): Promise<pg.QueryResult> {
  return admin.query(text, params);
}

describePg('PgStore', () => {
  it('folds to the same canonical node and the same three hashes as a local store', async () => {
    const dir = join(tempDir().dir, '.contextfold');
    const local = await ContextFold.open({ dir, tokenizer: 'reference', clock });
    const url = pgStoreUrl('same');
    const db = await ContextFold.open({ store: url, tokenizer: 'reference', clock });
    const a = await local.foldMany(turns);
    const b = await db.foldMany(turns);
    expect(b).toEqual(a);
    expect(await db.entries()).toEqual(await local.entries());
    const storeId = parsePgUrl(url).storeId;
    const rows = await sql(
      'SELECT step, artifact_sha256, payload_sha256, projection_sha256 FROM cf_nodes WHERE store_id = $1 ORDER BY step',
      [storeId],
    );
    expect(rows.rows.map((r) => r.artifact_sha256)).toEqual(a.map((r) => r.artifact_sha256));
    for (const t of turns) {
      const bytes = Buffer.from(t.content);
      expect(Buffer.from(await db.hydrateBytes(t.stepId)).equals(bytes)).toBe(true);
      expect((await db.hydrate(t.stepId)).payload_sha256).toBe(sha256Hex(bytes));
    }
    expect(await db.scan('which port does PostgreSQL use?')).toEqual(
      await local.scan('which port does PostgreSQL use?'),
    );
    expect(await db.recall('ECONNREFUSED')).toEqual(await local.recall('ECONNREFUSED'));
    expect((await db.validate()).ok).toBe(true);
    await local.close();
    await db.close();
  });

  it('a page folded by one process is paged in by another; refolding is idempotent', async () => {
    const url = pgStoreUrl('share');
    const a = await ContextFold.open({ store: url, tokenizer: 'reference', clock });
    const b = await ContextFold.open({ store: url, tokenizer: 'reference', clock });
    expect((await b.status()).nodes).toBe(0);
    await a.fold(turns[0]!);
    const p = await b.pageIn('Which port does PostgreSQL use?');
    expect(p.pages.map((x) => x.step_id)).toEqual([3]);
    expect(p.pages[0]!.content).toContain('psql -p 5433');
    expect((await b.fold(turns[0]!)).already_folded).toBe(true);
    await expect(b.fold({ ...turns[0]!, content: 'other' })).rejects.toMatchObject({
      code: 'STEP_CONFLICT',
    });
    await b.evict(3);
    expect((await a.entry(3))?.evicted).toBe(true);
    expect((await a.status()).evicted).toBe(1);
    await a.close();
    await b.close();
  });

  it('a fresh engine knows the stored token counts (a scan reads no payload to cost it)', async () => {
    const url = pgStoreUrl('tokens');
    const a = await ContextFold.open({ store: url, clock });
    const [r] = await a.foldMany([turns[0]!]);
    await a.close();
    const b = await ContextFold.open({ store: url });
    expect(b.backend.tokens(r!.payload_sha256, 'o200k')).toBeGreaterThan(0);
    await b.close();
  });

  it('a fresh engine filled from the tables answers as one that followed the feed', async () => {
    const url = pgStoreUrl('boot');
    const many = Array.from({ length: 2600 }, (_, i) => ({
      stepId: i,
      summary: `turn ${i}: service svc-${i % 97} on port ${3000 + (i % 211)}`,
      content: `$ start svc-${i % 97}\nlistening on ${3000 + (i % 211)}\nrun ${i}\n`,
    }));
    const follower = await ContextFold.open({ store: url, clock });
    for (let i = 0; i < many.length; i += 500) await follower.foldMany(many.slice(i, i + 500));
    for (const s of [5, 900, 5]) await follower.evict(s);
    const fresh = await ContextFold.open({ store: url });
    const a = follower.backend;
    const b = fresh.backend;
    expect(b.stats()).toEqual(a.stats());
    expect(b.fieldStats('ranked')).toEqual(a.fieldStats('ranked'));
    expect(b.evictions()).toEqual(a.evictions());
    expect(b.pendingCount()).toBe(0);
    expect(await fresh.entries()).toEqual(await follower.entries());
    for (const q of ['which port does svc-17 use?', 'run 1234', 'svc-5 listening']) {
      expect(await fresh.scan(q)).toEqual(await follower.scan(q));
      expect(await fresh.scan(q, { mode: 'reference' })).toEqual(
        await follower.scan(q, { mode: 'reference' }),
      );
    }
    const seven = (await fresh.entry(7))!;
    expect(b.tokens(seven.payload_sha256, 'o200k')).toBeGreaterThan(0);
    await follower.close();
    await fresh.close();
  });

  it('stores in one database never cross (store_id namespaces)', async () => {
    const one = await ContextFold.open({ store: pgStoreUrl('one'), tokenizer: 'reference' });
    const two = await ContextFold.open({ store: pgStoreUrl('two'), tokenizer: 'reference' });
    await one.fold(turns[0]!);
    await two.fold({ stepId: 3, summary: 'something else entirely', content: 'x' });
    expect((await one.entry(3))?.summary).toBe(turns[0]!.summary);
    expect((await two.entry(3))?.summary).toBe('something else entirely');
    expect((await two.scan('PostgreSQL port 5433')).selected).toEqual([]);
    await one.close();
    await two.close();
  });

  it('a missing store is refused for readers, created by the first fold', async () => {
    const url = pgStoreUrl('missing');
    await expect(
      ContextFold.open({ store: url, tokenizer: 'reference', mustExist: true }),
    ).rejects.toMatchObject({ code: 'STORE_NOT_FOUND' });
    const cf = await ContextFold.open({ store: url, tokenizer: 'reference' });
    await cf.fold(turns[0]!);
    await cf.close();
    const again = await ContextFold.open({ store: url, tokenizer: 'reference', mustExist: true });
    expect((await again.status()).nodes).toBe(1);
    await again.close();
  });

  it('rows edited behind the engine are refused with the codes of a tampered file', async () => {
    const url = pgStoreUrl('tamper');
    const id = parsePgUrl(url).storeId;
    const cf = await ContextFold.open({ store: url, tokenizer: 'reference', clock });
    await cf.foldMany(turns);
    // The payload inside the node's bytes.
    await sql(
      `UPDATE cf_nodes SET body = convert_to(replace(convert_from(body, 'UTF8'), '5433', '5434'), 'UTF8') WHERE store_id = $1 AND step = 3`,
      [id],
    );
    await expect(cf.hydrate(3)).rejects.toMatchObject({ code: 'INTEGRITY_CHECK' });
    // Bytes that are not even JSON.
    await sql(`UPDATE cf_nodes SET body = '\\x7b7b'::bytea WHERE store_id = $1 AND step = 4`, [id]);
    await expect(cf.hydrate(4)).rejects.toMatchObject({ code: 'INTEGRITY_CHECK' });
    // The hash metadata columns are never trusted: editing them changes nothing.
    await sql(
      `UPDATE cf_nodes SET artifact_sha256 = repeat('0', 64) WHERE store_id = $1 AND step = 9`,
      [id],
    );
    expect((await cf.hydrate(9)).verified).toBe(true);
    // The entry (index row): a file_path leading elsewhere, then a wrong artifact hash.
    await sql(
      `UPDATE cf_entries SET body = replace(body, 'cold_nodes/step_000009.json', '../../etc/passwd') WHERE store_id = $1 AND step = 9`,
      [id],
    );
    const fresh = await ContextFold.open({ store: url, tokenizer: 'reference' });
    await expect(fresh.hydrate(9)).rejects.toMatchObject({ code: 'PATH_CONTAINMENT' });
    const v = await fresh.validate();
    expect(v.ok).toBe(false);
    expect(v.problems.map((p) => p.step_id).sort()).toEqual([3, 4, 9]);
    expect(v.problems.find((p) => p.step_id === 3)?.path).toContain('step_000003.json');
    const check = await fresh.checkNode(3);
    expect(check.verified).toBe(false);
    expect(check.hashes.find((h) => h.name === 'artifact_sha256')?.ok).toBe(false);
    // A page-in never serves the tampered node; it reports it.
    const p = await fresh.pageIn('PostgreSQL port 5433', { mode: 'reference' });
    expect(p.pages).toEqual([]);
    expect(p.failures.map((f) => f.code)).toEqual(['INTEGRITY_CHECK']);
    await cf.close();
    await fresh.close();
  });

  it('an entry row that is no recall index record is refused naming its row', async () => {
    for (const [label, edit] of [
      ['json', `body = '{not json'`],
      ['step', `body = replace(body, '"step_id":3,', '"step_id":4,')`],
      ['shape', `body = replace(body, '"evicted":false', '"evicted":"no"')`],
    ] as const) {
      const url = pgStoreUrl(`entry-${label}`);
      const id = parsePgUrl(url).storeId;
      const cf = await ContextFold.open({ store: url, tokenizer: 'reference', clock });
      await cf.foldMany(turns);
      await cf.close();
      await sql(`UPDATE cf_entries SET ${edit} WHERE store_id = $1 AND step = 3`, [id]);
      const fresh = await ContextFold.open({ store: url, tokenizer: 'reference' });
      const row = `${fresh.dir}#cf_entries/3`;
      await expect(fresh.hydrate(9)).rejects.toMatchObject({
        code: 'INTEGRITY_CHECK',
        details: { path: row },
      });
      await expect(fresh.pageIn('Which port does PostgreSQL use?')).rejects.toMatchObject({
        code: 'INTEGRITY_CHECK',
      });
      const v = await fresh.validate();
      expect(v.ok).toBe(false);
      // Reported once, as the row it is (no 'stale index: run reindex' beside it).
      expect(v.problems.filter((p) => p.kind === 'index').map((p) => p.path)).toEqual([row]);
      expect(v.problems.find((p) => p.kind === 'orphaned_node')?.step_id).toBe(3);
      await fresh.close();
    }
  });

  it('a malformed stored analysis is derived content: the node is analysed again', async () => {
    const url = pgStoreUrl('analysis');
    const id = parsePgUrl(url).storeId;
    const cf = await ContextFold.open({ store: url, tokenizer: 'reference', clock });
    await cf.foldMany(turns);
    await cf.scan('port');
    await cf.close();
    await sql(`UPDATE cf_analyses SET body = '[[' WHERE store_id = $1`, [id]);
    const fresh = await ContextFold.open({ store: url, tokenizer: 'reference' });
    const p = await fresh.pageIn('Which port does PostgreSQL use?');
    expect(p.pages.map((x) => x.step_id)).toEqual([3]);
    expect((await fresh.validate()).ok).toBe(true);
    await fresh.close();
  });

  it('a node row deleted behind the engine is a broken reference; a row without entry an orphan', async () => {
    const url = pgStoreUrl('gone');
    const id = parsePgUrl(url).storeId;
    const cf = await ContextFold.open({ store: url, tokenizer: 'reference', clock });
    await cf.foldMany(turns);
    await sql('DELETE FROM cf_nodes WHERE store_id = $1 AND step = 9', [id]);
    await expect(cf.hydrate(9)).rejects.toMatchObject({ code: 'BROKEN_REFERENCE' });
    await sql(
      `INSERT INTO cf_nodes SELECT store_id, 77, body, artifact_sha256, payload_sha256, projection_sha256 FROM cf_nodes WHERE store_id = $1 AND step = 3`,
      [id],
    );
    await expect(cf.hydrate(77)).rejects.toMatchObject({ code: 'ORPHANED_NODE' });
    await expect(cf.fold({ stepId: 77, summary: 'x', content: 'y' })).rejects.toMatchObject({
      code: 'ORPHANED_NODE',
    });
    const v = await cf.validate();
    expect(v.problems.map((p) => [p.kind, p.step_id])).toEqual([
      ['broken_reference', 9],
      ['orphaned_node', 77],
    ]);
    await cf.close();
  });

  it('records its schema version; a newer database schema is refused', async () => {
    const r = await sql('SELECT max(version) AS v FROM contextfold_schema');
    expect(r.rows[0].v).toBe(PG_SCHEMA_VERSION);
    const name = `newer_${process.pid}`;
    await sql(`DROP DATABASE IF EXISTS ${name}`);
    await sql(`CREATE DATABASE ${name}`);
    const url = PG_URL!.replace(/\/contextfold$/, `/${name}`);
    const c = new pg.Client({ connectionString: url });
    await c.connect();
    await c.query(
      'CREATE TABLE contextfold_schema (version integer PRIMARY KEY, applied_at timestamptz)',
    );
    await c.query('INSERT INTO contextfold_schema (version) VALUES ($1)', [PG_SCHEMA_VERSION + 1]);
    await c.end();
    await expect(ContextFold.open({ store: `${url}?store_id=x` })).rejects.toMatchObject({
      code: 'USAGE',
      message: expect.stringContaining('newer than this contextfold'),
    });
    await sql(`DROP DATABASE ${name}`);
  });

  it("another application's tables, a missing database: one UsageError, nothing created", async () => {
    const name = `foreign_${process.pid}`;
    await sql(`DROP DATABASE IF EXISTS ${name}`);
    await sql(`CREATE DATABASE ${name}`);
    const url = PG_URL!.replace(/\/contextfold$/, `/${name}`);
    const c = new pg.Client({ connectionString: url });
    await c.connect();
    await c.query('CREATE TABLE cf_nodes (id integer, note text)');
    await expect(
      ContextFold.open({ store: `${url}?store_id=x` }).then((cf) => cf.fold(turns[0]!)),
    ).rejects.toMatchObject({
      code: 'USAGE',
      message: expect.stringContaining('tables contextfold did not create (cf_nodes)'),
    });
    const tables = await c.query(
      "SELECT tablename FROM pg_tables WHERE schemaname = 'public' ORDER BY tablename",
    );
    expect(tables.rows.map((r) => r.tablename)).toEqual(['cf_nodes']);
    await c.end();
    await sql(`DROP DATABASE ${name}`);
    const missing = PG_URL!.replace(/\/contextfold$/, `/missing_${process.pid}`);
    await expect(ContextFold.open({ store: `${missing}?store_id=x` })).rejects.toMatchObject({
      code: 'USAGE',
      message: expect.stringContaining('does not exist'),
    });
  });

  it('a role without CREATE rights reads a current schema; its fold is one UsageError', async () => {
    const url = pgStoreUrl('reader');
    const cf = await ContextFold.open({ store: url, tokenizer: 'reference', clock });
    await cf.fold(turns[0]!);
    await cf.close();
    const role = `reader_${process.pid}`;
    await sql(`DROP ROLE IF EXISTS ${role}`);
    await sql(`CREATE ROLE ${role} LOGIN`);
    await sql(`GRANT SELECT ON ALL TABLES IN SCHEMA public TO ${role}`);
    try {
      const asRole = url.replace('postgres://contextfold@', `postgres://${role}@`);
      const reader = await ContextFold.open({ store: asRole, tokenizer: 'reference' });
      expect((await reader.pageIn('Which port does PostgreSQL use?')).pages).toHaveLength(1);
      await expect(reader.fold(turns[2]!)).rejects.toMatchObject({
        code: 'USAGE',
        message: expect.stringContaining('permission denied'),
      });
      await reader.close();
    } finally {
      await sql(`DROP OWNED BY ${role}`);
      await sql(`DROP ROLE ${role}`);
    }
  });

  it('records holding a NUL are refused with one UsageError, nothing appended', async () => {
    const cf = await ContextFold.open({ store: pgStoreUrl('nul'), tokenizer: 'reference' });
    await cf.appendRecords('events', '{"a":1}\n');
    await expect(cf.appendRecords('events', '{"b":2}\nraw \u0000 nul\n')).rejects.toMatchObject({
      code: 'USAGE',
      message: expect.stringContaining('NUL'),
    });
    expect((await cf.readRecords('events')).text).toBe('{"a":1}\n');
    await cf.close();
  });

  it('a writer waits for the store lock at most lockTimeoutMs, then LOCK_TIMEOUT', async () => {
    const url = pgStoreUrl('locked');
    const cf = await ContextFold.open({ store: url, tokenizer: 'reference', lockTimeoutMs: 300 });
    await cf.fold(turns[0]!);
    // Another process's write transaction holds the store's lock until it is released.
    const other = await ContextFold.open({
      store: url,
      tokenizer: 'reference',
      lockTimeoutMs: 300,
    });
    let release!: () => void;
    const held = new Promise<void>((r) => {
      release = r;
    });
    const slow = other.backend.write(async () => {
      await held;
    });
    await new Promise((r) => setTimeout(r, 100));
    await expect(cf.fold(turns[2]!)).rejects.toMatchObject({ code: 'LOCK_TIMEOUT' });
    release();
    await slow;
    expect((await cf.fold(turns[2]!)).already_folded).toBe(false);
    await other.close();
    await cf.close();
  });

  it('an unreachable server is one clear error naming the store', async () => {
    await expect(
      ContextFold.open({ store: 'postgres://nobody@127.0.0.1:1/none?store_id=x' }),
    ).rejects.toMatchObject({
      code: 'STORE_UNAVAILABLE',
      message: expect.stringContaining('postgres://nobody@127.0.0.1:1/none?store_id=x'),
    });
  });
});
