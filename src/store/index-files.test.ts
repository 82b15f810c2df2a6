import { spawnSync } from 'node:child_process';
import { readdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { ContextFold } from '../engine/context-fold.js';
import type { IndexWarning } from '../engine/types.js';
import { tempDir } from '../test-utils/temp-dir.js';

/** A pid no process has any more: a child that ran and exited. */
function deadPid(): number {
  return spawnSync(process.execPath, ['-e', '0']).pid!;
}

/** A store directory holding one folded node, closed. */
async function storeOfOneNode(): Promise<string> {
  const dir = join(tempDir().dir, '.contextfold');
  const cf = await ContextFold.open({ dir, tokenizer: 'reference' });
  await cf.fold({ stepId: 1, summary: 's', content: 'c' });
  await cf.close();
  return dir;
}

describe('the build files of a rebuild whose process is gone', () => {
  it('are removed by the next open that can take the write lock, never those of a live process', async () => {
    const dir = await storeOfOneNode();
    // A SIGKILLed reindex left its build file (as large as the index) until the next rebuild.
    const dead = `index-9-0000dead.sqlite.build-${deadPid()}`;
    const live = `index-9-0000a11e.sqlite.build-${process.ppid}`;
    for (const name of [dead, `${dead}-wal`, `${dead}-shm`, live]) {
      writeFileSync(join(dir, name), 'x');
    }
    const builds = () => readdirSync(dir).filter((n) => n.includes('.build-'));
    const reader = await ContextFold.open({ dir, tokenizer: 'reference', readOnly: true });
    await reader.status();
    await reader.close();
    expect(builds()).toHaveLength(4); // a read-only open writes nothing
    const again = await ContextFold.open({ dir, tokenizer: 'reference' });
    expect((await again.status()).nodes).toBe(1);
    expect(builds()).toEqual([live]);
    await again.close();
  });

  it('are reported by validate on a read-only store, with their paths, and left in place', async () => {
    const dir = await storeOfOneNode();
    const dead = `index-9-0000dead.sqlite.build-${deadPid()}`;
    const live = `index-9-0000a11e.sqlite.build-${process.ppid}`;
    for (const name of [dead, `${dead}-wal`, live]) writeFileSync(join(dir, name), 'x');
    const warnings: IndexWarning[] = [];
    const reader = await ContextFold.open({
      dir,
      tokenizer: 'reference',
      readOnly: true,
      onWarning: (w) => warnings.push(w),
    });
    // validate said nothing of them: ok, no warning, and nothing removes them read-only.
    const said = [dead, `${dead}-wal`].map((name) => ({
      code: 'DEAD_BUILD_FILE',
      path: join(dir, name),
      message: `leftover file of a rebuild or compaction whose process is gone: ${join(dir, name)}; the next command with write access to the store removes it (or delete it)`,
    }));
    const r = await reader.validate();
    expect(r).toMatchObject({ ok: true, problems: [] });
    // In the result too (validate --json), not only told to onWarning.
    expect(r.warnings.filter((w) => w.code === 'DEAD_BUILD_FILE')).toEqual(said);
    await reader.close();
    expect(warnings.filter((w) => w.code === 'DEAD_BUILD_FILE')).toEqual(said);
    expect(readdirSync(dir).filter((n) => n.includes('.build-'))).toHaveLength(3);
  });

  it("a killed compaction's snapshot temp file: reported read-only, removed by the next writer, never a live process's", async () => {
    // Before, `.recall_index.json.tmp-<pid>-<n>` (as large as the snapshot) of a compaction
    // killed mid-write was neither reported by validate nor ever removed.
    const dir = await storeOfOneNode();
    const dead = `.recall_index.json.tmp-${deadPid()}-0`;
    const live = `.recall_index.json.tmp-${process.ppid}-3`;
    for (const name of [dead, live]) writeFileSync(join(dir, name), '{"partial":');
    const temps = () => readdirSync(dir).filter((n) => n.includes('.tmp-'));
    const reader = await ContextFold.open({ dir, tokenizer: 'reference', readOnly: true });
    const r = await reader.validate();
    await reader.close();
    expect(r).toMatchObject({ ok: true, problems: [] });
    expect(r.warnings).toEqual([
      expect.objectContaining({ code: 'DEAD_BUILD_FILE', path: join(dir, dead) }),
    ]);
    expect(temps().sort()).toEqual([dead, live].sort());
    const writer = await ContextFold.open({ dir, tokenizer: 'reference' });
    expect((await writer.status()).nodes).toBe(1);
    await writer.close();
    expect(temps()).toEqual([live]);
  });
});
