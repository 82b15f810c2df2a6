import { spawnSync } from 'node:child_process';
import { existsSync, mkdtempSync, readdirSync, rmSync, statSync } from 'node:fs';
import { cpus, loadavg, tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';
import { setFlagsFromString } from 'node:v8';
import { runInNewContext } from 'node:vm';
import { ContextFold } from '../engine/context-fold.js';
import { runBenchMain } from './bench-main.js';
import { durableFloorProbe } from './durable-floor.js';
import { fileCreateProbe } from './file-create-probe.js';
import { benchGuard } from './guard.js';
import { benchHook } from './hook-bench.js';
import { benchInspectOverview } from './inspect-overview.js';
import { benchInspectPack } from './inspect-pack.js';
import { quantile, withLoopDelay } from './loop-delay-probe.js';
import { referenceEngine, runReference } from './reference-engine.js';
import { log, type SynthTurn, synthesize, toInput } from './synth.js';

/**
 * `npm run bench`: prints one JSON object with fold (with and without redaction), scan, recall,
 * hydrate, validate, compaction, fresh-process and hook figures for N synthetic turns (default
 * 1k, 10k, 100k; `--sizes 1000,10000`), and the guard's figures (redaction cost per 2 KB, the
 * false-positive report over ../shared/data/trajectories).
 * `npm run bench -- --proxy[=sequential,concurrency,per_call]` prints the proxy's figures
 * instead (see ./proxy.ts); `--postgres=URL` the PostgreSQL store's beside the local one
 * (see ./postgres.ts). `--parts sizes,hook,pack,inspect,guard` runs only some parts (default
 * all; `inspect` is the inspector's pack page on a recorded 1,000-turn session, ./inspect-pack.ts);
 * `--skip-unredacted` skips the A/B store without redaction (halves a 100k run's fold time).
 * `--reference-engine PATH` runs the Python reference engine on the same stores (./reference-engine.ts).
 * Turns come from ../shared/bench/synth.py (the generator the reference was measured with).
 * Progress goes to stderr. Timings are measurements, never assertions.
 */

/** The reference engine's fresh-process scan at 10k, as issue 10 quotes it (when it is not run). */
const REFERENCE_CLI_SCAN_10K_MS = 1200;
/** Turns the durable floor of a fold is measured on (see `durableFloorProbe`). */
const FLOOR_TURNS = 2048;

const p50 = (xs: number[]) => quantile(xs, 0.5);

async function timeAsync<T>(fn: () => Promise<T>): Promise<[T, number]> {
  const t = performance.now();
  const r = await fn();
  return [r, performance.now() - t];
}

function duBytes(dir: string, filter: (name: string) => boolean = () => true): number {
  let total = 0;
  for (const name of readdirSync(dir, { recursive: true })) {
    if (!filter(String(name))) continue;
    const st = statSync(join(dir, String(name)));
    if (st.isFile()) total += st.size;
  }
  return total;
}

const CLI = fileURLToPath(new URL('../cli/bin.js', import.meta.url));
const OPEN_SCAN = fileURLToPath(new URL('./open-scan.js', import.meta.url));
const hasTime = existsSync('/usr/bin/time');

/** Wall time and peak RSS (MB, when GNU time is there) of a fresh process. */
function fresh(
  args: string[],
  env: NodeJS.ProcessEnv = process.env,
): {
  ms: number;
  rss: number | null;
  cpuMs: number | null;
  stdout: string;
} {
  const cmd = hasTime ? '/usr/bin/time' : process.execPath;
  const argv = hasTime ? ['-f', '%M %U %S', process.execPath, ...args] : args;
  const t = performance.now();
  const r = spawnSync(cmd, argv, { encoding: 'utf8', env });
  const ms = performance.now() - t;
  if (r.status !== 0) throw new Error(`${args.join(' ')} failed: ${r.stderr}`);
  const last = r.stderr.trim().split('\n').pop() ?? '';
  const [rssKb, user, sys] = last.split(' ').map(Number);
  return {
    ms,
    rss: hasTime ? Math.round(rssKb! / 1024) : null,
    cpuMs: hasTime ? Math.round((user! + sys!) * 1000) : null,
    stdout: r.stdout,
  };
}

/** Fresh-process figures: the CLI scan in both modes, and one open + scan + page-in. */
function freshProcess(dir: string, queries: string[]) {
  const cli = (mode: string) =>
    queries
      .slice(0, 5)
      .map((q) => fresh([CLI, '--dir', dir, '--json', '--retrieval', mode, 'scan', q]));
  const ranked = cli('ranked');
  const reference = cli('reference');
  const openScan = JSON.parse(fresh([OPEN_SCAN, dir, 'ranked', queries[0]!]).stdout) as Record<
    string,
    number
  >;
  const stat = (runs: { ms: number; rss: number | null; cpuMs: number | null }[]) => ({
    p50_ms: p50(runs.map((r) => r.ms)),
    cpu_p50_ms: runs[0]!.cpuMs === null ? null : p50(runs.map((r) => r.cpuMs!)),
    max_ms: quantile(
      runs.map((r) => r.ms),
      1,
    ),
    peak_rss_mb: runs[0]!.rss === null ? null : Math.max(...runs.map((r) => r.rss!)),
  });
  return {
    node_startup: nodeStartup(dir, queries[0]!),
    cli_scan_ranked: stat(ranked),
    cli_scan_reference: stat(reference),
    open_scan_page_in: openScan,
  };
}

/**
 * What starting Node costs here (`node -e 0`, p50 of five), so the fresh-process figures can be
 * read against it. `NODE_EXTRA_CA_CERTS` makes every Node process parse a certificate bundle
 * before any script runs (about 0.1 s a process on the development VM); where it is set, Node's
 * start and the CLI scans are also measured without it.
 */
function nodeStartup(dir: string, query: string) {
  const startup = (env?: NodeJS.ProcessEnv) =>
    p50(Array.from({ length: 5 }, () => fresh(['-e', '0'], env).ms));
  const extra = process.env.NODE_EXTRA_CA_CERTS;
  if (extra === undefined) return { p50_ms: startup(), node_extra_ca_certs: null };
  const env = { ...process.env };
  delete env.NODE_EXTRA_CA_CERTS;
  const scan = (mode: string) =>
    p50(
      Array.from(
        { length: 5 },
        () => fresh([CLI, '--dir', dir, '--json', '--retrieval', mode, 'scan', query], env).ms,
      ),
    );
  return {
    p50_ms: startup(),
    node_extra_ca_certs: extra,
    without_extra_ca_certs: {
      node_p50_ms: startup(env),
      cli_scan_ranked_p50_ms: scan('ranked'),
      cli_scan_reference_p50_ms: scan('reference'),
    },
  };
}

async function inProcess(cf: ContextFold, queries: string[], turns: SynthTurn[], n: number) {
  const scans: Record<string, { cold_p50: number; warm_p50: number; warm_p99: number }> = {};
  for (const mode of ['ranked', 'reference'] as const) {
    const cold: number[] = [];
    const warm: number[] = [];
    for (let rep = 0; rep < 5; rep++) {
      for (const q of queries) {
        const ms = (await timeAsync(() => cf.scan(q, { mode })))[1];
        (rep === 0 ? cold : warm).push(ms);
      }
    }
    scans[mode] = { cold_p50: p50(cold), warm_p50: p50(warm), warm_p99: quantile(warm, 0.99) };
  }
  const recall: number[] = [];
  const pageIn: number[] = [];
  for (const q of queries) {
    recall.push((await timeAsync(() => cf.recall(q, { limit: 20 })))[1]);
    pageIn.push((await timeAsync(() => cf.pageIn(q)))[1]);
  }
  const hydrate: number[] = [];
  for (let i = 0; i < 100; i++) {
    hydrate.push((await timeAsync(() => cf.hydrate(turns[(i * 7919) % n]!.step_id)))[1]);
  }
  return {
    scan_ranked_ms: scans.ranked,
    scan_reference_ms: scans.reference,
    recall_limit20_p50_ms: p50(recall),
    page_in_ranked_p50_ms: p50(pageIn),
    hydrate_p50_ms: p50(hydrate),
    varied_ranked_scans: await variedScans(cf, turns, n),
    long_prompt_ranked_scan: await longPromptScans(cf, turns, n),
  };
}

/**
 * Ranked scans of prompts as long as a pasted log (turns of the store joined: 10, 40 and 160
 * KB), with the process's RSS after each: a scan searches a long prompt by its rarest keys
 * only, so neither grows with the prompt (stop 37: a 160 KB prompt took 19 s and 5.9 GB at 100k
 * before).
 */
async function longPromptScans(cf: ContextFold, turns: SynthTurn[], n: number) {
  const out: { prompt_kb: number; ms: number; rss_mb: number }[] = [];
  for (const count of [5, 20, 80]) {
    const prompt = Array.from({ length: count }, (_, i) => turns[(i * 7919) % n]!.raw_content).join(
      '\n',
    );
    const ms = (await timeAsync(() => cf.scan(prompt, { mode: 'ranked' })))[1];
    out.push({
      prompt_kb: Math.round(Buffer.byteLength(prompt) / 1024),
      ms: Math.round(ms),
      rss_mb: Math.round(process.memoryUsage().rss / 2 ** 20),
    });
  }
  return out;
}

/** Ranked scans of a long-lived process asked varied prompts, and its heap as it goes. */
const VARIED_SCANS = 600;

/**
 * A server's view of the store: {@link VARIED_SCANS} different prompts (two words of a turn
 * spread over the store each), one after the other. The live heap after each quarter shows
 * whether what the process keeps between scans stays bounded (it did not: stop 34).
 */
async function variedScans(cf: ContextFold, turns: SynthTurn[], n: number) {
  const words = (i: number): string[] =>
    turns[(i * 7919) % n]!.raw_content.split(/\s+/).filter((w) => /^[A-Za-z_][\w.-]{3,}$/.test(w));
  const ms: number[] = [];
  const heap: number[] = [];
  for (let i = 0; i < VARIED_SCANS; i++) {
    const w = words(i);
    const prompt = `What about ${w[i % Math.max(1, w.length)] ?? 'it'} and ${w[(3 * i + 1) % Math.max(1, w.length)] ?? 'that'}?`;
    ms.push((await timeAsync(() => cf.scan(prompt, { mode: 'ranked' })))[1]);
    if ((i + 1) % (VARIED_SCANS / 4) === 0) heap.push(liveHeapMb());
  }
  return { scans: VARIED_SCANS, p50_ms: p50(ms), live_heap_mb_each_quarter: heap };
}

/**
 * The heap still reachable, after a full collection (without one, the figure is mostly garbage
 * not yet collected, and says nothing about what the process keeps).
 */
function liveHeapMb(): number {
  setFlagsFromString('--expose-gc');
  (runInNewContext('gc') as () => void)();
  return Math.round(process.memoryUsage().heapUsed / 2 ** 20);
}

interface BenchOptions {
  /** Skip the A/B store without redaction (halves the fold time of a 100k run). */
  skipUnredacted: boolean;
  /** The Python reference engine's script, run on the same stores (see ./reference-engine.ts). */
  reference: string | undefined;
}

/**
 * The reference engine on the same store, as fresh processes: its `scan` of the queries ours
 * ran (the store just closed, so its `recall_index.json` is current).
 */
function referenceScans(script: string, dir: string, queries: string[]) {
  const runs = queries.slice(0, 5).map((q) => {
    const r = runReference({ script, storeDir: dir, args: ['scan', q] });
    if (r.status !== 0) throw new Error(`the reference engine's scan failed: ${r.stderr.trim()}`);
    return r.ms;
  });
  return { p50_ms: p50(runs), max_ms: quantile(runs, 1) };
}

/** The reference engine reads the store this version wrote: `validate`, and `hydrate` of a sample. */
function referenceReads(script: string, dir: string, steps: number[]) {
  const v = runReference({ script, storeDir: dir, args: ['validate'] });
  const failed = steps.filter(
    (s) => runReference({ script, storeDir: dir, args: ['hydrate', String(s)] }).status !== 0,
  );
  return {
    validate_ok: v.status === 0,
    validate_ms: Math.round(v.ms),
    validate_says: v.stdout.trim().split('\n').pop() ?? '',
    hydrated: steps.length,
    hydrate_failed: failed,
  };
}

/**
 * foldMany of the first n turns, 5,000-turn batch by batch, into the store and (unless skipped)
 * into a second store without redaction; then the store's close, which compacts.
 */
async function foldBothWays(options: {
  root: string;
  dir: string;
  n: number;
  turns: SynthTurn[];
  skipUnredacted: boolean;
}) {
  const { root, dir, n, turns, skipUnredacted } = options;
  // The guard's overhead is measured A/B: each 5,000-turn batch goes into this store (redacted,
  // the default) and then into a second store with `redact: false`, so drift in the machine's
  // load and in the page cache hits both sides alike.
  const fileCreate = fileCreateProbe(root);
  const durableFloor = await durableFloorProbe(
    root,
    turns.slice(0, Math.min(n, FLOOR_TURNS)).map(toInput),
  );
  const cf = await ContextFold.open({ dir });
  const raw = await ContextFold.open({ dir: join(root, 'raw', '.contextfold'), redact: false });
  let foldManyMs = 0;
  let foldManyCpu = 0;
  let rawFoldManyMs = 0;
  for (let i = 0; i < n; i += 5000) {
    const batch = turns.slice(i, Math.min(n, i + 5000)).map(toInput);
    const cpu0 = process.cpuUsage();
    foldManyMs += (await timeAsync(() => cf.foldMany(batch)))[1];
    const cpu = process.cpuUsage(cpu0);
    foldManyCpu += (cpu.user + cpu.system) / 1000;
    if (!skipUnredacted) rawFoldManyMs += (await timeAsync(() => raw.foldMany(batch)))[1];
  }
  await raw.close();
  rmSync(join(root, 'raw'), { recursive: true, force: true });
  const [, closeMs, closeDelay] = await withLoopDelay(() => cf.close());
  return {
    fileCreate,
    durableFloor,
    foldManyMs,
    foldManyCpu,
    rawFoldManyMs: skipUnredacted ? null : rawFoldManyMs,
    closeMs,
    closeDelay,
  };
}

type FoldRun = Awaited<ReturnType<typeof foldBothWays>>;

/** The fold part's figures: per turn, and the redaction's cost also per 2 KB of a turn's text. */
function foldFigures(run: FoldRun, turns: SynthTurn[], n: number) {
  const { foldManyMs, foldManyCpu, rawFoldManyMs } = run;
  const payloadBytes = turns
    .slice(0, n)
    .reduce(
      (sum, t) =>
        sum + Buffer.byteLength(t.raw_content, 'utf8') + Buffer.byteLength(t.summary, 'utf8'),
      0,
    );
  const overheadPerTurn = rawFoldManyMs === null ? null : (foldManyMs - rawFoldManyMs) / n;
  return {
    fold_many: {
      total_ms: Math.round(foldManyMs),
      per_turn_ms: Number((foldManyMs / n).toFixed(3)),
      cpu_per_turn_ms: Number((foldManyCpu / n).toFixed(3)),
      // The file system's own cost of creating a node's file, in the store's parent directory.
      file_create: run.fileCreate,
      // The same turns' nodes built and written durably with no index: what no design avoids.
      durable_floor: run.durableFloor,
    },
    fold_many_without_redaction:
      rawFoldManyMs === null
        ? null
        : {
            total_ms: Math.round(rawFoldManyMs),
            per_turn_ms: Number((rawFoldManyMs / n).toFixed(3)),
          },
    redaction_overhead_in_fold_many:
      overheadPerTurn === null
        ? null
        : {
            per_turn_ms: Number(overheadPerTurn.toFixed(4)),
            mean_turn_bytes: Math.round(payloadBytes / n),
            per_2kb_ms: Number(((overheadPerTurn * 2048) / (payloadBytes / n)).toFixed(4)),
          },
    close_compaction_ms: Math.round(run.closeMs),
    close_compaction_loop_delay_ms: run.closeDelay,
  };
}

/**
 * The fresh-process part: the first open after the close's compaction, the CLI's scans and one
 * open + scan + page-in, and the reference engine's scans when it runs.
 */
function freshProcessPart(options: {
  n: number;
  dir: string;
  queries: string[];
  reference: string | undefined;
}) {
  const { n, dir, queries, reference } = options;
  // The first open after a compaction hashes the new snapshot once (then it is trusted by identity).
  const firstOpen = fresh([OPEN_SCAN, dir, 'reference', queries[0]!]);
  const freshFigures = freshProcess(dir, queries);
  if (reference) log(`N=${n}: the reference engine's scan, fresh processes …`);
  const refScan = reference ? referenceScans(reference, dir, queries) : null;
  return {
    first_open_after_compaction_ms: Math.round(firstOpen.ms),
    ...freshFigures,
    ...(refScan ? { reference_engine_scan: refScan } : {}),
  };
}

/** Validate, compaction and status of the open store, each timed; then its close. */
async function upkeepFigures(cf: ContextFold) {
  const [v, validateMs, validateDelay] = await withLoopDelay(() => cf.validate());
  const [, compactMs, compactDelay] = await withLoopDelay(() => cf.compact());
  const [st, statusMs] = await timeAsync(() => cf.status());
  await cf.close();
  return {
    validate_ms: Math.round(validateMs),
    validate_ok: v.ok,
    validate_loop_delay_ms: validateDelay,
    compact_ms: Math.round(compactMs),
    compact_loop_delay_ms: compactDelay,
    status_ms: Math.round(statusMs),
    status_sanitized_nodes: st.sanitized_nodes,
  };
}

async function benchSize(
  n: number,
  turns: SynthTurn[],
  queries: string[],
  work: string,
  opts: BenchOptions,
) {
  const root = mkdtempSync(join(work, `n${n}-`));
  const dir = join(root, '.contextfold');
  log(`N=${n}: foldMany, with and without redaction, batch by batch …`);
  const folded = await foldBothWays({ root, dir, n, turns, skipUnredacted: opts.skipUnredacted });

  log(`N=${n}: fresh processes …`);
  const freshFigures = freshProcessPart({ n, dir, queries, reference: opts.reference });

  log(`N=${n}: in-process …`);
  const [cf, openMs] = await timeAsync(async () => {
    const e = await ContextFold.open({ dir });
    await e.entriesPage({ limit: 0 }); // syncs (status would read every node: measured apart)
    return e;
  });
  const inproc = await inProcess(cf, queries, turns, n);

  log(`N=${n}: single durable folds …`);
  const single: number[] = [];
  for (let i = 0; i < 40; i++)
    single.push((await timeAsync(() => cf.fold(toInput(turns[n + i]!))))[1]);

  log(`N=${n}: validate, compaction …`);
  const upkeep = await upkeepFigures(cf);
  if (opts.reference) log(`N=${n}: the reference engine validates and hydrates the store …`);
  const refReads = opts.reference
    ? referenceReads(
        opts.reference,
        dir,
        // Each reference command parses the whole recall_index.json (about 17 s at 100k).
        Array.from({ length: n > 10_000 ? 3 : 20 }, (_, i) => turns[(i * 7919) % n]!.step_id),
      )
    : null;
  log(`N=${n}: contextfold inspect, time to overview …`);
  const inspect = await benchInspectOverview(dir);
  const index = duBytes(dir, (f) => /^index-.*\.sqlite/.test(f));
  const bytes = duBytes(dir);
  rmSync(root, { recursive: true, force: true });
  return {
    n,
    ...foldFigures(folded, turns, n),
    single_fold_ms: { p50: p50(single), p99: quantile(single, 0.99) },
    fresh_process: freshFigures,
    ...(refReads ? { reference_engine_reads: refReads } : {}),
    in_process: { open_ms: Math.round(openMs), ...inproc },
    ...upkeep,
    inspect_overview: inspect,
    bytes_on_disk: bytes,
    index_bytes: index,
    load_average_1m: Number(loadavg()[0]!.toFixed(2)),
  };
}

const USAGE = `usage: npm run bench -- [options]   (or node dist/bench/run.js [options])

Prints one JSON object of measurements on stdout (progress on stderr). Timings are
measurements, never assertions.

  --sizes N,N,...          store sizes in synthetic turns (default 1000,10000,100000)
  --parts P,P,...          sizes, hook, pack, inspect, guard (default all; inspect: the
                           inspector's pack page on a recorded 1,000-turn session)
  --skip-unredacted        skip the A/B store without redaction (halves a 100k run's folds)
  --hook-only              only the Claude Code hook on a 2,000-turn transcript
  --proxy[=PARTS]          only the API proxy (sequential, concurrency, per_call)
  --postgres=URL           the PostgreSQL store beside the local one (sizes default 10000,100000)
  --reference-engine PATH  the Python reference engine (contextfold.py; default
                           $CONTEXTFOLD_REFERENCE_ENGINE): its fresh-process scan on the same
                           stores, and its validate and hydrate of what this version wrote
  -h, --help               this text
`;

const PARTS = ['sizes', 'hook', 'pack', 'inspect', 'guard'];

/** The bench's command line, checked: an unknown option or part is an error, not a long run. */
function benchArgs(argv: readonly string[]) {
  // A bare --proxy means every proxy part (parseArgs has no optional option values).
  const args = argv.map((a) => (a === '--proxy' ? '--proxy=all' : a));
  const { values } = parseArgs({
    args,
    options: {
      sizes: { type: 'string' },
      parts: { type: 'string', default: PARTS.join(',') },
      'skip-unredacted': { type: 'boolean', default: false },
      'hook-only': { type: 'boolean', default: false },
      proxy: { type: 'string' },
      postgres: { type: 'string' },
      'reference-engine': { type: 'string' },
      help: { type: 'boolean', short: 'h', default: false },
    },
    strict: true,
    allowPositionals: false,
  });
  const parts = new Set(values.parts.split(','));
  const unknown = [...parts].filter((x) => !PARTS.includes(x));
  if (unknown.length > 0) {
    throw new Error(`--parts: unknown part ${unknown.join(', ')} (use ${PARTS.join(', ')})`);
  }
  const sizeList = (text: string) => {
    const list = text.split(',').map(Number);
    if (list.some((x) => !Number.isSafeInteger(x) || x <= 0)) {
      throw new Error('--sizes takes a comma-separated list of positive integers');
    }
    return list;
  };
  return { values, parts, sizeList };
}

/** `--hook-only`: the Claude Code hook alone, printed with the node version. */
async function printHookOnly(): Promise<void> {
  const work = mkdtempSync(join(tmpdir(), 'contextfold-bench-'));
  try {
    const hook = await benchHook({ exchanges: 1000, work });
    process.stdout.write(`${JSON.stringify({ node: process.version, hook }, null, 2)}\n`);
  } finally {
    rmSync(work, { recursive: true, force: true });
  }
}

/** `--proxy[=PARTS]`: the proxy's figures instead (see ./proxy.ts), loaded only then. */
async function printProxy(proxyParts: string): Promise<void> {
  const { benchProxy } = await import('./proxy.js');
  const only = proxyParts === 'all' ? undefined : proxyParts.split(',');
  const figures = await benchProxy(only ? { parts: only as never } : {});
  process.stdout.write(`${JSON.stringify(figures, null, 2)}\n`);
}

/** `--postgres=URL`: the PostgreSQL store's figures beside the local one's (see ./postgres.ts). */
async function printPostgres(url: string, sizes: number[]): Promise<void> {
  const { benchPostgres } = await import('./postgres.js');
  const figures = await benchPostgres({ url, sizes });
  process.stdout.write(`${JSON.stringify(figures, null, 2)}\n`);
}

/** Every store size, smallest first, on turns synthesized once for the largest (and 40 more). */
async function benchSizes(sizes: number[], work: string, opts: BenchOptions) {
  const results = [];
  const max = Math.max(...sizes);
  const { turns, queries } = synthesize(max + 40, work);
  for (const n of sizes.sort((a, b) => a - b)) {
    const r = await benchSize(n, turns, queries, work, opts);
    log(`N=${n}: ${JSON.stringify(r)}`);
    results.push(r);
  }
  return results;
}

/** The hook part: its figures, or the error that stopped it (the other parts still report). */
async function hookPart(work: string): Promise<unknown> {
  log('Claude Code hook on a 2,000-turn transcript …');
  let hook: unknown;
  try {
    hook = await benchHook({ exchanges: 1000, work });
  } catch (e) {
    hook = { error: (e as Error).message };
  }
  log(`hook: ${JSON.stringify(hook)}`);
  return hook;
}

/** The inspector's pack page on a recorded 1,000-turn session (see ./inspect-pack.ts). */
async function inspectPackPart(work: string): Promise<unknown> {
  log('inspect: the pack page of a recorded 1,000-turn session (recording takes minutes) …');
  const root = mkdtempSync(join(work, 'inspect-pack-'));
  try {
    const r = await benchInspectPack(root);
    log(`inspect: ${JSON.stringify(r)}`);
    return r;
  } finally {
    rmSync(root, { recursive: true, force: true });
  }
}

/**
 * The pack part, when this build has the harness's bench. Its import is tried whatever the
 * parts: a failed one is reported in its place.
 */
async function packPart(parts: Set<string>): Promise<unknown> {
  try {
    const harnessBench = '../harness/bench.js'; // optional module: resolved at run time
    const harness = (await import(harnessBench)) as {
      benchPackAssembly?: () => Promise<unknown>;
    };
    if (harness.benchPackAssembly && parts.has('pack')) {
      log('pack assembly (1,000-turn session) …');
      return await harness.benchPackAssembly();
    }
    return null;
  } catch (e) {
    return { error: (e as Error).message };
  }
}

async function main(): Promise<void> {
  const { values, parts, sizeList } = benchArgs(process.argv.slice(2));
  if (values.help) {
    process.stdout.write(USAGE);
    return;
  }
  if (values['hook-only']) {
    await printHookOnly();
    return;
  }
  if (values.proxy !== undefined) {
    await printProxy(values.proxy);
    return;
  }
  const opts: BenchOptions = {
    skipUnredacted: values['skip-unredacted'],
    reference: referenceEngine(values['reference-engine']),
  };
  if (values.postgres !== undefined) {
    await printPostgres(values.postgres, sizeList(values.sizes ?? '10000,100000'));
    return;
  }
  const sizes = sizeList(values.sizes ?? '1000,10000,100000');
  const work = mkdtempSync(join(tmpdir(), 'contextfold-bench-'));
  try {
    const results = parts.has('sizes') ? await benchSizes(sizes, work, opts) : [];
    const hook = parts.has('hook') ? await hookPart(work) : null;
    const pack = await packPart(parts);
    const inspectPack = parts.has('inspect') ? await inspectPackPart(work) : null;
    let guard: unknown = null;
    if (parts.has('guard')) {
      log('guard: redaction cost and the false-positive report over ../shared/data/trajectories …');
      guard = await benchGuard();
    }
    const first = results[0];
    const last = results[results.length - 1];
    const at10k = results.find((r) => r.n === 10_000);
    process.stdout.write(
      `${JSON.stringify(
        {
          node: process.version,
          cpus: cpus().length,
          tokenizer: 'o200k',
          sizes: results,
          single_fold_growth:
            first && last
              ? Number((last.single_fold_ms.p50 / first.single_fold_ms.p50).toFixed(2))
              : null,
          load_average: loadavg().map((x) => Number(x.toFixed(2))),
          reference_engine: referenceSummary(opts.reference, at10k),
          claude_code_hook: hook,
          pack_assembly: pack,
          inspect_pack: inspectPack,
          guard,
        },
        null,
        2,
      )}\n`,
    );
  } finally {
    rmSync(work, { recursive: true, force: true });
  }
}

type SizeResult = Awaited<ReturnType<typeof benchSize>>;

/** Our fresh-process scan at 10k against the reference engine's: measured in this run, or quoted. */
function referenceSummary(script: string | undefined, at10k: SizeResult | undefined) {
  const ours = at10k
    ? {
        ranked: at10k.fresh_process.cli_scan_ranked.p50_ms,
        reference: at10k.fresh_process.cli_scan_reference.p50_ms,
      }
    : null;
  const measured = at10k?.fresh_process.reference_engine_scan?.p50_ms;
  const theirs = measured ?? REFERENCE_CLI_SCAN_10K_MS;
  return {
    runnable: script !== undefined,
    ...(script ? { script } : {}),
    note:
      measured !== undefined
        ? 'the reference engine ran on the same 10k store in this run'
        : 'the reference engine was not run (--reference-engine): the ratio is against the 1.2 s issue 10 quotes',
    cli_scan_10k_p50_ms: theirs,
    ours_cli_scan_10k_p50_ms: ours,
    ratio_10k: ours
      ? {
          ranked: Number((ours.ranked / theirs).toFixed(3)),
          reference: Number((ours.reference / theirs).toFixed(3)),
        }
      : null,
  };
}

runBenchMain('contextfold bench', main);
