import { spawnSync } from 'node:child_process';
import { readdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { ContextFold } from '../engine/context-fold.js';
import { tempDir } from '../test-utils/temp-dir.js';

/** A pid no process has any more: a child that ran and exited. */
function deadPid(): number {
  return spawnSync(process.execPath, ['-e', '0']).pid!;
}

describe('the build files of a rebuild whose process is gone', () => {
  it('are removed by the next open that can take the write lock, never those of a live process', async () => {
    const dir = join(tempDir().dir, '.contextfold');
    const cf = await ContextFold.open({ dir, tokenizer: 'reference' });
    await cf.fold({ stepId: 1, summary: 's', content: 'c' });
    await cf.close();
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
});
