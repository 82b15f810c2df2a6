import { spawn } from 'node:child_process';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, describe, expect, it } from 'vitest';
import { ContextFold } from '../engine/context-fold.js';
import { tempDir } from '../test-utils/temp-dir.js';

const tmp = tempDir();
afterAll(() => tmp.cleanup());

const engineModule = fileURLToPath(new URL('../../dist/engine/context-fold.js', import.meta.url));

function runWriter(script: string, args: string[]): Promise<number> {
  return new Promise((resolve, reject) => {
    const p = spawn(process.execPath, [script, ...args], {
      stdio: ['ignore', 'ignore', 'inherit'],
    });
    p.on('error', reject);
    p.on('exit', (code) => resolve(code ?? -1));
  });
}

describe('inter-process locking', () => {
  it('four processes folding 250 turns each into one store end with 1000 indexed nodes and a clean validate', async () => {
    const dir = join(tmp.dir, '.contextfold');
    const script = join(tmp.dir, 'writer.mjs');
    writeFileSync(
      script,
      `import { ContextFold } from ${JSON.stringify(engineModule)};
const [dir, worker] = process.argv.slice(2);
const cf = await ContextFold.open({ dir, tokenizer: 'reference', journalCompactThreshold: 64 });
for (let i = 0; i < 250; i++) {
  const step = Number(worker) * 250 + i;
  await cf.fold({ stepId: step, summary: 'turn ' + step, content: 'worker ' + worker + ' wrote turn ' + step + '\\n$ make test' });
}
await cf.close();
`,
    );
    const codes = await Promise.all([0, 1, 2, 3].map((w) => runWriter(script, [dir, String(w)])));
    expect(codes).toEqual([0, 0, 0, 0]);
    const cf = await ContextFold.open({ dir, tokenizer: 'reference' });
    const v = await cf.validate();
    expect(v).toEqual({ ok: true, checked: 1000, sanitized: 1000, problems: [] });
    const steps = (await cf.entries()).map((e) => e.step_id);
    expect(steps).toEqual(Array.from({ length: 1000 }, (_, i) => i));
    await cf.close();
  });
});
