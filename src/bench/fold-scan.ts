import { mkdtempSync, rmSync } from 'node:fs';
import { loadavg, tmpdir } from 'node:os';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import { ContextFold } from '../engine/context-fold.js';
import { runBenchMain } from './bench-main.js';
import { durableFloorProbe } from './durable-floor.js';
import { fileCreateProbe } from './file-create-probe.js';
import { log, type SynthTurn, synthesize, toInput } from './synth.js';

/**
 * A narrow bench for iterating on the two hot paths: `foldMany` of N synthetic turns into a
 * fresh store (5,000-turn batches, as `run.js` folds them; wall and CPU per turn), then the
 * in-process ranked scan over the synth queries after a reopen (first pass and warm passes).
 * `node dist/bench/fold-scan.js [--n 10000] [--skip-scan]`; run it under `node --cpu-prof` for a
 * profile. Progress on stderr, one JSON object on stdout. Timings are measurements only.
 */
const USAGE = `usage: node dist/bench/fold-scan.js [--n 10000] [--skip-scan]

foldMany of N synthetic turns (5,000-turn batches) into a fresh store, then the in-process
ranked scan over the synth queries after a reopen. One JSON object on stdout, progress on
stderr. Run it under \`node --cpu-prof\` for a profile.

  --n N         turns to fold (default 10000)
  --skip-scan   fold only
  -h, --help    this text
`;

/** foldMany of the first n turns in 5,000-turn batches, as `run.js` folds them (wall, CPU ms). */
async function foldInBatches(cf: ContextFold, turns: SynthTurn[], n: number) {
  let wall = 0;
  let cpu = 0;
  for (let i = 0; i < n; i += 5000) {
    const batch = turns.slice(i, Math.min(n, i + 5000)).map(toInput);
    const c0 = process.cpuUsage();
    const t0 = performance.now();
    await cf.foldMany(batch);
    wall += performance.now() - t0;
    const c = process.cpuUsage(c0);
    cpu += (c.user + c.system) / 1000;
  }
  return { wall, cpu };
}

/** Ten passes of ranked scans over the queries after a reopen: the first pass, then warm ones. */
async function rankedScans(dir: string, queries: string[]) {
  const cf = await ContextFold.open({ dir });
  await cf.entriesPage({ limit: 0 });
  const cold: number[] = [];
  const warm: number[] = [];
  const c0 = process.cpuUsage();
  for (let rep = 0; rep < 10; rep++) {
    for (const q of queries) {
      const s = performance.now();
      await cf.scan(q, { mode: 'ranked' });
      (rep === 0 ? cold : warm).push(performance.now() - s);
    }
  }
  const c = process.cpuUsage(c0);
  await cf.close({ compact: false });
  const q = (xs: number[], p: number) => {
    const s = [...xs].sort((a, b) => a - b);
    return +s[Math.min(s.length - 1, Math.floor(p * s.length))]!.toFixed(3);
  };
  return {
    first_pass_p50: q(cold, 0.5),
    first_pass_total: +cold.reduce((a, b) => a + b, 0).toFixed(1),
    warm_p50: q(warm, 0.5),
    warm_p99: q(warm, 0.99),
    cpu_per_scan: +((c.user + c.system) / 1000 / (cold.length + warm.length)).toFixed(3),
  };
}

async function main(): Promise<void> {
  const { values } = parseArgs({
    options: {
      n: { type: 'string', default: '10000' },
      'skip-scan': { type: 'boolean', default: false },
      help: { type: 'boolean', short: 'h', default: false },
    },
    strict: true,
    allowPositionals: false,
  });
  if (values.help) {
    process.stdout.write(USAGE);
    return;
  }
  const n = Number(values.n);
  if (!Number.isSafeInteger(n) || n < 1) throw new Error('--n takes a positive integer');
  const work = mkdtempSync(join(tmpdir(), 'contextfold-foldscan-'));
  try {
    const { turns, queries } = synthesize(n, work);
    const dir = join(work, '.contextfold');
    const fileCreate = fileCreateProbe(work);
    const durableFloor = await durableFloorProbe(
      work,
      turns.slice(0, Math.min(n, 2048)).map(toInput),
    );
    const cf = await ContextFold.open({ dir });
    log(`foldMany of ${n} turns …`);
    const { wall, cpu } = await foldInBatches(cf, turns, n);
    const t0 = performance.now();
    await cf.close();
    const closeMs = performance.now() - t0;
    const out: Record<string, unknown> = {
      n,
      fold_many_per_turn_ms: { wall: +(wall / n).toFixed(3), cpu: +(cpu / n).toFixed(3) },
      file_create: fileCreate,
      durable_floor: durableFloor,
      close_ms: Math.round(closeMs),
    };
    if (!values['skip-scan']) {
      log('ranked scans …');
      out.scan_ranked_ms = await rankedScans(dir, queries);
    }
    out.load_average_1m = +loadavg()[0]!.toFixed(2);
    process.stdout.write(`${JSON.stringify(out)}\n`);
  } finally {
    rmSync(work, { recursive: true, force: true });
  }
}

runBenchMain('fold-scan', main);
