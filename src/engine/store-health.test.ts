import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { tempDir } from '../test-utils/temp-dir.js';
import { ContextFold } from './context-fold.js';

describe('status', () => {
  it('refuses a store whose recall_index.json is damaged, as recall does, instead of stale counts', async () => {
    const dir = join(tempDir().dir, '.contextfold');
    const cf = await ContextFold.open({ dir, tokenizer: 'reference' });
    await cf.foldMany([
      { stepId: 1, summary: 'one', content: 'first turn' },
      { stepId: 2, summary: 'two', content: 'second turn' },
    ]);
    await cf.close();
    // The derived index still holds both entries; the snapshot it came from is cut short.
    const snapshot = join(dir, 'recall_index.json');
    writeFileSync(snapshot, readFileSync(snapshot, 'utf8').slice(0, -10));
    const again = await ContextFold.open({ dir, tokenizer: 'reference', mustExist: true });
    try {
      await expect(again.recall('turn')).rejects.toMatchObject({ code: 'INTEGRITY_CHECK' });
      await expect(again.status()).rejects.toMatchObject({
        code: 'INTEGRITY_CHECK',
        message: expect.stringContaining('recall_index.json'),
      });
    } finally {
      await again.close();
    }
  });
});
