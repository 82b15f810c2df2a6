import { existsSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { runCliInProcess } from '../../test-utils/cli.js';
import { BACKENDS, type BackendName, storeFor } from '../../test-utils/pg.js';
import { tempDir } from '../../test-utils/temp-dir.js';

describe.each(BACKENDS)('contextfold fold STEP SUMMARY (%s)', (backend: BackendName) => {
  it("names the node where it is, not the record's file_path (.contextfold/cold_nodes/…)", async () => {
    const dir = join(tempDir().dir, 'custom-store');
    const store = storeFor(backend, dir, 'fold-cli');
    const line = async () =>
      (await runCliInProcess(['--store', store, 'fold', '3', 'a summary'])).stdout.split('\n')[0];
    const first = await line();
    if (backend === 'local')
      expect(first).toBe(`folded step 3 → ${join(dir, 'cold_nodes', 'step_000003.json')}`);
    else
      expect(first).toMatch(
        /^folded step 3 → postgres(ql)?:\/\/\S+#cold_nodes\/step_000003\.json$/,
      );
    expect(await line()).toBe(first!.replace('folded', 'already folded'));
  });
});

describe('contextfold fold --jsonl', () => {
  it("names the batch's own line shape for a line that is not a JSON object, not the turns file's role", async () => {
    const work = tempDir().dir;
    const dir = join(work, '.contextfold');
    const bad = join(work, 'bad.jsonl');
    writeFileSync(bad, '{"step_id":1,"summary":"a","content":"x"}\n{"step_id":2,"summary":"b"\n');
    const r = await runCliInProcess(['--dir', dir, 'fold', '--jsonl', bad]);
    expect(r.code).toBe(1);
    expect(r.stderr).toContain(`${bad}:2: not valid JSON`);
    expect(r.stderr).toContain('{"step_id","summary","content"} object per line');
    expect(r.stderr).not.toContain('role');
    writeFileSync(bad, '[1]\n');
    const arr = await runCliInProcess(['--dir', dir, 'fold', '--jsonl', bad]);
    expect(arr.stderr).toContain('expected a JSON object {"step_id","summary","content"}');
    expect(existsSync(dir)).toBe(false);
  });

  it('a line without a summary gets the first non-blank line of its payload, trimmed, at most 200 characters (docs/cli.md)', async () => {
    const work = tempDir().dir;
    const dir = join(work, '.contextfold');
    const batch = join(work, 'b.jsonl');
    const rows = [
      { step_id: 1, content: '\n  \n  second line  \nthird' },
      { step_id: 2, content: `${'x'.repeat(300)}\nrest` },
    ];
    writeFileSync(batch, rows.map((r) => JSON.stringify(r)).join('\n'));
    expect((await runCliInProcess(['--dir', dir, 'fold', '--jsonl', batch])).code).toBe(0);
    const r = await runCliInProcess(['--dir', dir, '--json', 'recall', 'rest second']);
    const summaries = JSON.parse(r.stdout).candidates.map((c: { summary: string }) => c.summary);
    expect(summaries.sort()).toEqual(['second line', `${'x'.repeat(199)}…`]);
  });
});
