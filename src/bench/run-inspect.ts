import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { ContextFold } from '../engine/context-fold.js';
import { benchInspectOverview } from './inspect-overview.js';
import { log, synthesize, toInput } from './synth.js';

/**
 * `npm run bench:inspect [-- --sizes 1000,10000,100000]`: time-to-overview of
 * `contextfold inspect` on stores of N synthetic turns (default 1k and 10k; 100k only when
 * asked: building it takes minutes). Prints one JSON object; progress on stderr.
 */
async function main(): Promise<void> {
  const arg = process.argv.indexOf('--sizes');
  const sizes = (arg > 0 ? process.argv[arg + 1]! : '1000,10000')
    .split(',')
    .map((s) => Number(s))
    .filter((x) => Number.isSafeInteger(x) && x > 0)
    .sort((a, b) => a - b);
  if (sizes.length === 0)
    throw new Error('--sizes takes a comma-separated list of positive integers');
  const work = mkdtempSync(join(tmpdir(), 'contextfold-bench-inspect-'));
  try {
    const { turns } = synthesize(sizes[sizes.length - 1]!, work);
    const results = [];
    for (const n of sizes) {
      const dir = join(work, `n${n}`, '.contextfold');
      log(`N=${n}: building the store …`);
      const cf = await ContextFold.open({ dir, cacheDir: false });
      for (let i = 0; i < n; i += 5000)
        await cf.foldMany(turns.slice(i, Math.min(n, i + 5000)).map(toInput));
      await cf.close();
      log(`N=${n}: contextfold inspect …`);
      const r = { n, ...(await benchInspectOverview(dir)) };
      log(`N=${n}: ${JSON.stringify(r)}`);
      results.push(r);
      rmSync(join(work, `n${n}`), { recursive: true, force: true });
    }
    process.stdout.write(
      `${JSON.stringify({ node: process.version, inspect: results }, null, 2)}\n`,
    );
  } finally {
    rmSync(work, { recursive: true, force: true });
  }
}

main().catch((e) => {
  process.stderr.write(`contextfold bench:inspect: ${e instanceof Error ? e.message : e}\n`);
  process.exitCode = 1;
});
