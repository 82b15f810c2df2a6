import { spawnSync } from 'node:child_process';
import { mkdtempSync, readdirSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { ContextFold } from '../engine/context-fold.js';
import { benchGuard } from './guard.js';
import { benchHook } from './hook-bench.js';
import { benchInspectOverview } from './inspect-overview.js';
import { log, type SynthTurn, synthesize, toInput } from './synth.js';

/**
 * `npm run bench`: prints one JSON object with fold (with and without redaction), scan, recall,
 * hydrate, validate, status, CLI and pack-assembly figures for N synthetic turns (default 1k,
 * 10k, 100k; `--sizes 1000,10000`), and the guard's figures (redaction cost per 2 KB, the
 * false-positive report over ../shared/data/trajectories).
 * `npm run bench -- --proxy[=sequential,concurrency,per_call]` prints the proxy's figures
 * instead (see ./proxy.ts).
 * Turns come from ../shared/bench/synth.py (the generator the reference was measured with).
 * Progress goes to stderr. Timings are measurements, never assertions.
 */

function quantile(xs: number[], q: number): number {
  const s = [...xs].sort((a, b) => a - b);
  return Number(s[Math.min(s.length - 1, Math.floor(q * s.length))]!.toFixed(3));
}

function time<T>(fn: () => T): [T, number] {
  const t = performance.now();
  const r = fn();
  return [r, performance.now() - t];
}

async function timeAsync<T>(fn: () => Promise<T>): Promise<[T, number]> {
  const t = performance.now();
  const r = await fn();
  return [r, performance.now() - t];
}

function duBytes(dir: string): number {
  let total = 0;
  for (const name of readdirSync(dir, { recursive: true })) {
    const st = statSync(join(dir, String(name)));
    if (st.isFile()) total += st.size;
  }
  return total;
}

async function benchSize(n: number, turns: SynthTurn[], queries: string[], work: string) {
  const root = mkdtempSync(join(work, `n${n}-`));
  const dir = join(root, '.contextfold');
  const cli = fileURLToPath(new URL('../cli/bin.js', import.meta.url));
  log(`N=${n}: foldMany, with and without redaction, batch by batch …`);
  // The guard's overhead is measured A/B: each 5,000-turn batch goes into this store (redacted,
  // the default) and then into a second store with `redact: false`, so drift in the machine's
  // load and in the page cache hits both sides alike.
  let cf = await ContextFold.open({ dir });
  const raw = await ContextFold.open({ dir: join(root, 'raw', '.contextfold'), redact: false });
  let foldManyMs = 0;
  let rawFoldManyMs = 0;
  for (let i = 0; i < n; i += 5000) {
    const batch = turns.slice(i, Math.min(n, i + 5000)).map(toInput);
    foldManyMs += (await timeAsync(() => cf.foldMany(batch)))[1];
    rawFoldManyMs += (await timeAsync(() => raw.foldMany(batch)))[1];
  }
  await raw.close();
  rmSync(join(root, 'raw'), { recursive: true, force: true });
  const [, closeMs] = await timeAsync(() => cf.close());
  const [reopened, openMs] = await timeAsync(() => ContextFold.open({ dir }));
  cf = reopened;
  const payloadBytes = turns
    .slice(0, n)
    .reduce(
      (sum, t) =>
        sum + Buffer.byteLength(t.raw_content, 'utf8') + Buffer.byteLength(t.summary, 'utf8'),
      0,
    );
  const overheadPerTurn = (foldManyMs - rawFoldManyMs) / n;

  log(`N=${n}: single durable folds …`);
  const single: number[] = [];
  for (let i = 0; i < 40; i++) {
    const t = turns[n + i]!;
    single.push((await timeAsync(() => cf.fold(toInput(t))))[1]);
  }

  log(`N=${n}: scan / recall / hydrate / pageIn …`);
  // The first ranked scan after a cold open indexes (or loads from the analysis cache) every turn.
  const [, firstRankedScanMs] = await timeAsync(() => cf.scan(queries[0]!, { mode: 'ranked' }));
  for (const q of queries) await cf.scan(q, { mode: 'reference' }); // warm the token-count cache
  const scanMs: number[] = [];
  const rankedScanMs: number[] = [];
  const recallMs: number[] = [];
  const pageInMs: number[] = [];
  for (let rep = 0; rep < 5; rep++) {
    for (const q of queries) {
      scanMs.push((await timeAsync(() => cf.scan(q, { mode: 'reference' })))[1]);
      rankedScanMs.push((await timeAsync(() => cf.scan(q, { mode: 'ranked' })))[1]);
      recallMs.push((await timeAsync(() => cf.recall(q, { limit: 20 })))[1]);
      pageInMs.push((await timeAsync(() => cf.pageIn(q)))[1]);
    }
  }
  const hydrateMs: number[] = [];
  for (let i = 0; i < 200; i++) {
    const step = turns[(i * 7919) % n]!.step_id;
    hydrateMs.push((await timeAsync(() => cf.hydrate(step)))[1]);
  }
  log(`N=${n}: validate …`);
  const [v, validateMs] = await timeAsync(() => cf.validate());
  const [st, statusMs] = await timeAsync(() => cf.status());
  await cf.close();

  log(`N=${n}: CLI scan as a fresh process …`);
  const cliScan = (mode: string, q: string): number => {
    const [r, ms] = time(() =>
      spawnSync(process.execPath, [cli, '--dir', dir, '--json', '--retrieval', mode, 'scan', q], {
        env: { ...process.env, CONTEXTFOLD_CACHE_DIR: cacheDir },
      }),
    );
    if (r.status !== 0) throw new Error(`CLI scan failed: ${r.stderr}`);
    return ms;
  };
  const cacheDir = join(root, 'analysis-cache');
  const cliMs = queries.slice(0, 5).map((q) => cliScan('reference', q));
  // Ranked in a fresh process: the first run analyses every turn and fills the analysis cache,
  // later runs read it. Skipped above 10k turns (minutes per cold run; see docs/benchmarks.md).
  const rankedCli =
    n <= 10_000
      ? {
          cold_cache_ms: Math.round(cliScan('ranked', queries[0]!)),
          warm_cache_p50_ms: quantile(
            queries.slice(1, 4).map((q) => cliScan('ranked', q)),
            0.5,
          ),
        }
      : null;
  log(`N=${n}: contextfold inspect, time to overview …`);
  const inspect = await benchInspectOverview(dir);
  const bytes = duBytes(dir);
  rmSync(root, { recursive: true, force: true });
  return {
    n,
    fold_many: {
      total_ms: Math.round(foldManyMs),
      per_turn_ms: Number((foldManyMs / n).toFixed(3)),
    },
    fold_many_without_redaction: {
      total_ms: Math.round(rawFoldManyMs),
      per_turn_ms: Number((rawFoldManyMs / n).toFixed(3)),
    },
    redaction_overhead_in_fold_many: {
      per_turn_ms: Number(overheadPerTurn.toFixed(4)),
      mean_turn_bytes: Math.round(payloadBytes / n),
      per_2kb_ms: Number(((overheadPerTurn * 2048) / (payloadBytes / n)).toFixed(4)),
    },
    close_compact_ms: Math.round(closeMs),
    open_ms: Math.round(openMs),
    single_fold_ms: { p50: quantile(single, 0.5), p99: quantile(single, 0.99) },
    scan_reference_ms: { p50: quantile(scanMs, 0.5), p99: quantile(scanMs, 0.99) },
    scan_ranked_ms: { p50: quantile(rankedScanMs, 0.5), p99: quantile(rankedScanMs, 0.99) },
    first_ranked_scan_after_open_ms: Math.round(firstRankedScanMs),
    recall_limit20_ms: { p50: quantile(recallMs, 0.5), p99: quantile(recallMs, 0.99) },
    page_in_ranked_ms: { p50: quantile(pageInMs, 0.5), p99: quantile(pageInMs, 0.99) },
    hydrate_ms: { p50: quantile(hydrateMs, 0.5), p99: quantile(hydrateMs, 0.99) },
    validate_ms: Math.round(validateMs),
    validate_ok: v.ok,
    status_first_call_ms: Math.round(statusMs),
    status_sanitized_nodes: st.sanitized_nodes,
    cli_scan_reference_fresh_process_ms: { p50: quantile(cliMs, 0.5), max: quantile(cliMs, 1) },
    cli_scan_ranked_fresh_process: rankedCli,
    inspect_overview: inspect,
    bytes_on_disk: bytes,
    peak_rss_mb: Math.round(process.resourceUsage().maxRSS / 1024),
  };
}

async function main(): Promise<void> {
  if (process.argv.includes('--hook-only')) {
    const work = mkdtempSync(join(tmpdir(), 'contextfold-bench-'));
    try {
      const hook = await benchHook({ exchanges: 1000, work });
      process.stdout.write(`${JSON.stringify({ node: process.version, hook }, null, 2)}\n`);
    } finally {
      rmSync(work, { recursive: true, force: true });
    }
    return;
  }
  const proxyArg = process.argv.find((a) => a === '--proxy' || a.startsWith('--proxy='));
  if (proxyArg) {
    // `npm run bench -- --proxy[=sequential,concurrency,per_call]`: the proxy's figures only.
    const { benchProxy } = await import('./proxy.js');
    const parts = proxyArg.includes('=') ? proxyArg.split('=')[1]!.split(',') : undefined;
    const figures = await benchProxy(parts ? { parts: parts as never } : {});
    process.stdout.write(`${JSON.stringify(figures, null, 2)}\n`);
    return;
  }
  const arg = process.argv.indexOf('--sizes');
  const sizes = (arg > 0 ? process.argv[arg + 1]! : '1000,10000,100000')
    .split(',')
    .map((s) => Number(s))
    .filter((x) => Number.isSafeInteger(x) && x > 0);
  if (sizes.length === 0)
    throw new Error('--sizes takes a comma-separated list of positive integers');
  const work = mkdtempSync(join(tmpdir(), 'contextfold-bench-'));
  try {
    const max = Math.max(...sizes);
    const { turns, queries } = synthesize(max + 40, work);
    const results = [];
    for (const n of sizes.sort((a, b) => a - b)) {
      const r = await benchSize(n, turns, queries, work);
      log(`N=${n}: ${JSON.stringify(r)}`);
      results.push(r);
    }
    let pack: unknown = null;
    try {
      const harnessBench = '../harness/bench.js'; // optional module: resolved at run time
      const harness = (await import(harnessBench)) as {
        benchPackAssembly?: () => Promise<unknown>;
      };
      if (harness.benchPackAssembly) {
        log('pack assembly (1,000-turn session) …');
        pack = await harness.benchPackAssembly();
      }
    } catch (e) {
      pack = { error: (e as Error).message };
    }
    log('Claude Code hook on a 2,000-turn transcript …');
    const hook = await benchHook({ exchanges: 1000, work });
    log(`hook: ${JSON.stringify(hook)}`);
    log('guard: redaction cost and the false-positive report over ../shared/data/trajectories …');
    const guard = await benchGuard();
    const first = results[0]!;
    const last = results[results.length - 1]!;
    process.stdout.write(
      `${JSON.stringify(
        {
          node: process.version,
          tokenizer: 'o200k',
          sizes: results,
          pack_assembly: pack,
          hook,
          guard,
          single_fold_growth: Number(
            (last.single_fold_ms.p50 / first.single_fold_ms.p50).toFixed(2),
          ),
        },
        null,
        2,
      )}\n`,
    );
  } finally {
    rmSync(work, { recursive: true, force: true });
  }
}

main().catch((e) => {
  process.stderr.write(`contextfold bench: ${e instanceof Error ? e.message : e}\n`);
  process.exitCode = 1;
});
