import { existsSync, mkdirSync } from 'node:fs';
import { loadavg } from 'node:os';
import { join } from 'node:path';
import { ContextFold } from '../engine/context-fold.js';
import { withLoopDelay } from './loop-delay-probe.js';
import { log, synthesize, toInput } from './synth.js';

/**
 * `node dist/bench/loop-delay.js --dir DIR [--n 100000] [--skip-validate]`: the event-loop delay (p99 and max) of
 * a 100k-node store's compaction and validate in the process that runs them (issue 15). The
 * store is built once into DIR (a few minutes of CPU) and kept, so the measurement can be run
 * again after a change; each run folds 40 fresh turns first, so the compaction has a journal to
 * fold in, as `npm run bench`'s compaction does. Prints one JSON object; progress on stderr.
 * Timings are measurements, never assertions.
 */
async function main(): Promise<void> {
  const arg = (name: string) => {
    const i = process.argv.indexOf(name);
    return i > 0 ? process.argv[i + 1] : undefined;
  };
  const root = arg('--dir');
  if (!root) throw new Error('usage: loop-delay --dir DIR [--n 100000]');
  const n = Number(arg('--n') ?? 100000);
  const dir = join(root, '.contextfold');
  if (!existsSync(dir)) {
    mkdirSync(root, { recursive: true });
    const { turns } = synthesize(n, root);
    const cf = await ContextFold.open({ dir });
    for (let i = 0; i < n; i += 5000) {
      await cf.foldMany(turns.slice(i, Math.min(n, i + 5000)).map(toInput));
      log(`built ${Math.min(n, i + 5000)} of ${n}`);
    }
    await cf.close();
  }
  const cf = await ContextFold.open({ dir });
  const { total } = await cf.entriesPage({ limit: 0 });
  const last = (await cf.entriesPage({ offset: total - 1, limit: 1 })).entries[0]?.step_id ?? 0;
  for (let i = 1; i <= 40; i++) {
    const stepId = last + i;
    await cf.fold({ stepId, summary: `extra turn ${stepId}`, content: `extra turn ${stepId}\n` });
  }
  log(`compaction of ${total + 40} nodes …`);
  const [, compactMs, compactDelay] = await withLoopDelay(() => cf.compact());
  const validate = process.argv.includes('--skip-validate')
    ? null
    : await (async () => {
        log(`validate of ${total + 40} nodes …`);
        const [v, ms, delay] = await withLoopDelay(() => cf.validate());
        return { validate_ms: Math.round(ms), validate_ok: v.ok, validate_loop_delay_ms: delay };
      })();
  await cf.close();
  const figures = {
    node: process.version,
    nodes: total + 40,
    compact_ms: Math.round(compactMs),
    compact_loop_delay_ms: compactDelay,
    ...validate,
    load_average_1m: Number(loadavg()[0]!.toFixed(2)),
  };
  process.stdout.write(`${JSON.stringify(figures, null, 2)}\n`);
}

main().catch((e: unknown) => {
  process.stderr.write(`loop-delay: ${e instanceof Error ? e.message : String(e)}\n`);
  process.exit(1);
});
