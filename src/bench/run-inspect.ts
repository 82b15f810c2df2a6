import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import { ContextFold } from '../engine/context-fold.js';
import { runBenchMain } from './bench-main.js';
import { benchInspectOverview } from './inspect-overview.js';
import { log, synthesize, toInput } from './synth.js';

/**
 * `npm run bench:inspect [-- --sizes 1000,10000,100000]`: time-to-overview of
 * `contextfold inspect` on stores of N synthetic turns (default 1k and 10k; 100k only when
 * asked: building it takes minutes). Prints one JSON object; progress on stderr.
 */
const USAGE = `usage: npm run bench:inspect -- [--sizes 1000,10000]

Time to overview of \`contextfold inspect\` on stores of N synthetic turns. One JSON object on
stdout, progress on stderr. A 100k store takes minutes to build.

  --sizes N,N,...   store sizes in synthetic turns (default 1000,10000)
  -h, --help        this text
`;

async function main(): Promise<void> {
  const { values } = parseArgs({
    options: {
      sizes: { type: 'string', default: '1000,10000' },
      help: { type: 'boolean', short: 'h', default: false },
    },
    strict: true,
    allowPositionals: false,
  });
  if (values.help) {
    process.stdout.write(USAGE);
    return;
  }
  const sizes = values.sizes.split(',').map((s) => Number(s));
  if (sizes.some((x) => !Number.isSafeInteger(x) || x <= 0)) {
    throw new Error('--sizes takes a comma-separated list of positive integers');
  }
  sizes.sort((a, b) => a - b);
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

runBenchMain('contextfold bench:inspect', main);
