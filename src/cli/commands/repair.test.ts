import { copyFileSync, existsSync, mkdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { ContextFold } from '../../engine/context-fold.js';
import { runCliInProcess } from '../../test-utils/cli.js';
import { tempDir } from '../../test-utils/temp-dir.js';

/** A store whose step 7 node file has no index entry (copied in from another store). */
async function storeWithOrphan(): Promise<{ dir: string; orphan: string }> {
  const root = tempDir().dir;
  const dir = join(root, 'a', '.contextfold');
  const other = join(root, 'b', '.contextfold');
  const a = await ContextFold.open({ dir, tokenizer: 'reference' });
  await a.fold({ stepId: 1, summary: 'one', content: 'first turn' });
  await a.close();
  const b = await ContextFold.open({ dir: other, tokenizer: 'reference' });
  await b.fold({ stepId: 7, summary: 'seven', content: 'PostgreSQL on port 5433' });
  await b.close();
  const orphan = join(dir, 'cold_nodes', 'step_000007.json');
  mkdirSync(join(dir, 'cold_nodes'), { recursive: true });
  copyFileSync(join(other, 'cold_nodes', 'step_000007.json'), orphan);
  return { dir, orphan };
}

describe('contextfold repair', () => {
  it('dry run names the action and changes nothing; --apply re-indexes, logs, validates clean', async () => {
    const { dir, orphan } = await storeWithOrphan();
    const dry = await runCliInProcess(['--dir', dir, 'repair', '--json']);
    expect(dry.code).toBe(0);
    const plan = JSON.parse(dry.stdout);
    expect(plan.applied).toBe(false);
    expect(plan.items).toEqual([
      {
        problem: expect.objectContaining({ kind: 'orphaned_node', step_id: 7, path: orphan }),
        actions: [{ action: 'reindex', step_id: 7, path: orphan }],
      },
    ]);
    expect(existsSync(join(dir, 'repair_log.jsonl'))).toBe(false);
    expect((await runCliInProcess(['--dir', dir, 'validate'])).code).toBe(1);

    const human = await runCliInProcess(['--dir', dir, 'repair']);
    expect(human.stdout).toContain('would: reindex');
    expect(human.stdout).toContain('dry run: nothing changed');

    const done = await runCliInProcess(['--dir', dir, 'repair', '--apply', '--json']);
    expect(done.code).toBe(0);
    expect(JSON.parse(done.stdout)).toMatchObject({ applied: true, remaining: [] });
    const log = readFileSync(join(dir, 'repair_log.jsonl'), 'utf8').trimEnd().split('\n');
    expect(log.map((l) => JSON.parse(l))).toEqual([
      expect.objectContaining({
        version: 1,
        action: 'reindex',
        step_id: 7,
        path: orphan,
        problem: 'orphaned_node',
      }),
    ]);
    expect((await runCliInProcess(['--dir', dir, 'validate'])).code).toBe(0);
    const h = await runCliInProcess(['--dir', dir, 'hydrate', '7', '--json']);
    expect(JSON.parse(h.stdout).content).toBe('PostgreSQL on port 5433');
    expect((await runCliInProcess(['--dir', dir, 'repair'])).stdout).toBe(
      'ok: validate found no problems, nothing to repair\n',
    );
  });

  it('a missing store is one JSON error object (nothing created)', async () => {
    const dir = join(tempDir().dir, 'none');
    const r = await runCliInProcess(['--dir', dir, 'repair', '--apply', '--json']);
    expect(r.code).toBe(1);
    expect(JSON.parse(r.stdout)).toMatchObject({ error: 'StoreNotFoundError', path: dir });
    expect(existsSync(dir)).toBe(false);
  });
});
