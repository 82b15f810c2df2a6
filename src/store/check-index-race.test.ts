import { join } from 'node:path';
import { describe, expect, it, vi } from 'vitest';
import { ContextFold } from '../engine/context-fold.js';
import { tempDir } from '../test-utils/temp-dir.js';

/** Set: the next comparison of the index with the files first lets this writer commit. */
let writeDuringCheck: (() => Promise<void>) | null = null;

vi.mock('./index-check.js', async (importOriginal) => {
  const real = await importOriginal<typeof import('./index-check.js')>();
  return {
    ...real,
    compareEntries: async (...args: Parameters<typeof real.compareEntries>) => {
      const write = writeDuringCheck;
      writeDuringCheck = null;
      if (write) await write();
      return real.compareEntries(...args);
    },
  };
});

describe("validate while another process's write commits", () => {
  it('does not report a stale index that was only behind', async () => {
    const dir = join(tempDir().dir, '.contextfold');
    const open = () => ContextFold.open({ dir, tokenizer: 'reference', redact: false });
    const a = await open();
    await a.fold({ stepId: 1, summary: 'one', content: 'first' });
    await a.close();
    const checker = await open();
    writeDuringCheck = async () => {
      const b = await open();
      await b.fold({ stepId: 2, summary: 'two', content: 'second' });
      await b.close(); // compacts: recall_index.json is replaced under the check
    };
    // It said "the derived index is stale (step 2 …): run 'contextfold reindex'".
    const v = await checker.validate();
    expect(writeDuringCheck).toBeNull();
    expect(v.problems).toEqual([]);
    expect(v.ok).toBe(true);
    await checker.close();
  });
});
