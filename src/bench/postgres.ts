import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import pg from 'pg';
import { ContextFold } from '../engine/context-fold.js';
import { log, type SynthTurn, synthesize, toInput } from './synth.js';

/** Options of {@link benchPostgres}. */
export interface PostgresBenchOptions {
  /** A PostgreSQL server's URL (a database the bench may create stores in). */
  url: string;
  sizes: number[];
}

function quantile(xs: number[], q: number): number {
  const s = [...xs].sort((a, b) => a - b);
  return Number(s[Math.min(s.length - 1, Math.floor(q * s.length))]!.toFixed(3));
}

async function ms<T>(fn: () => Promise<T>): Promise<number> {
  const t = performance.now();
  await fn();
  return performance.now() - t;
}

/** Fold and scan figures of one backend at one size. */
async function measure(store: string, turns: SynthTurn[], queries: string[], n: number) {
  const cf = await ContextFold.open({ store });
  let foldMany = 0;
  for (let i = 0; i < n; i += 5000) {
    const batch = turns.slice(i, Math.min(n, i + 5000)).map(toInput);
    foldMany += await ms(() => cf.foldMany(batch));
  }
  await cf.close();
  // A fresh engine: what a new process pays to open the store and answer its first scan.
  const t = performance.now();
  const again = await ContextFold.open({ store });
  await again.scan(queries[0]!);
  const openFirstScan = performance.now() - t;
  const scans: Record<string, number[]> = { ranked: [], reference: [] };
  for (const mode of ['ranked', 'reference'] as const) {
    for (let rep = 0; rep < 3; rep++) {
      for (const q of queries) scans[mode]!.push(await ms(() => again.scan(q, { mode })));
    }
  }
  const pageIn: number[] = [];
  for (const q of queries.slice(0, 20)) pageIn.push(await ms(() => again.pageIn(q)));
  const single: number[] = [];
  for (let i = 0; i < 40; i++) single.push(await ms(() => again.fold(toInput(turns[n + i]!))));
  await again.close();
  return {
    fold_many_per_turn_ms: Number((foldMany / n).toFixed(3)),
    single_fold_ms: { p50: quantile(single, 0.5), p99: quantile(single, 0.99) },
    open_and_first_scan_ms: Math.round(openFirstScan),
    scan_ranked_ms: { p50: quantile(scans.ranked!, 0.5), p99: quantile(scans.ranked!, 0.99) },
    scan_reference_ms: {
      p50: quantile(scans.reference!, 0.5),
      p99: quantile(scans.reference!, 0.99),
    },
    page_in_ranked_p50_ms: quantile(pageIn, 0.5),
  };
}

/**
 * `npm run bench -- --postgres=URL [--sizes 10000,100000]`: fold and scan figures on
 * PostgreSQL beside the local store, same turns, same machine. PostgreSQL runs with its own
 * durability settings (the local store fsyncs every batch and every single fold).
 */
export async function benchPostgres(options: PostgresBenchOptions): Promise<unknown> {
  const work = mkdtempSync(join(tmpdir(), 'contextfold-bench-pg-'));
  const admin = new pg.Client({ connectionString: options.url });
  await admin.connect();
  const settings = await admin.query(
    "SELECT name, setting FROM pg_settings WHERE name IN ('fsync', 'synchronous_commit', 'shared_buffers') ORDER BY name",
  );
  const server = (await admin.query('SHOW server_version')).rows[0].server_version as string;
  const sizes = [];
  try {
    for (const n of options.sizes) {
      const { turns, queries } = synthesize(n + 40, work);
      log(`N=${n}: local store …`);
      const dir = join(mkdtempSync(join(work, `n${n}-`)), '.contextfold');
      const local = await measure(dir, turns, queries, n);
      rmSync(dir, { recursive: true, force: true });
      log(`N=${n}: PostgreSQL store …`);
      const id = `bench-${n}-${process.pid}`;
      const sep = options.url.includes('?') ? '&' : '?';
      const postgres = await measure(`${options.url}${sep}store_id=${id}`, turns, queries, n);
      const size = await admin.query(
        `SELECT pg_size_pretty(sum(pg_total_relation_size(c.oid))::bigint) AS total FROM pg_class c
          JOIN pg_namespace s ON s.oid = c.relnamespace WHERE s.nspname = 'public' AND c.relkind = 'r'`,
      );
      await admin.query('DELETE FROM cf_stores WHERE store_id = $1', [id]);
      sizes.push({ n, local, postgres, database_size_with_this_store: size.rows[0].total });
    }
  } finally {
    await admin.end();
    rmSync(work, { recursive: true, force: true });
  }
  return {
    node: process.version,
    postgres: server,
    settings: Object.fromEntries(settings.rows.map((r) => [r.name, r.setting])),
    sizes,
  };
}
