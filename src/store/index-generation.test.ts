import { readdirSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it, vi } from 'vitest';
import { ContextFold } from '../engine/context-fold.js';
import { tempDir } from '../test-utils/temp-dir.js';

/** While set, preparing a new index file fails as on a full disk (after SQLite created it). */
let full = false;

vi.mock('./index-schema.js', async (importOriginal) => {
  const real = await importOriginal<typeof import('./index-schema.js')>();
  return {
    ...real,
    prepareIndexFile: (...args: Parameters<typeof real.prepareIndexFile>) => {
      if (full && args[2]) {
        throw Object.assign(new Error('database or disk is full'), { code: 'SQLITE_FULL' });
      }
      return real.prepareIndexFile(...args);
    },
  };
});

/** While set, loading the snapshot into a new index first deletes every index file (a user's rm). */
let removeIndexFiles = false;

vi.mock('./index-loader.js', async (importOriginal) => {
  const real = await importOriginal<typeof import('./index-loader.js')>();
  return {
    ...real,
    loadSnapshot: (...args: Parameters<typeof real.loadSnapshot>) => {
      const dir = args[2].dir;
      if (removeIndexFiles) {
        for (const n of readdirSync(dir)) if (n.startsWith('index-')) rmSync(join(dir, n));
      }
      return real.loadSnapshot(...args);
    },
  };
});

describe('a reindex whose index files are deleted while it builds', () => {
  it('is one usage error naming the build file, and leaves nothing behind', async () => {
    const dir = join(tempDir().dir, '.contextfold');
    const cf = await ContextFold.open({ dir, tokenizer: 'reference' });
    await cf.foldMany([{ stepId: 1, summary: 's', content: 'c' }]);
    removeIndexFiles = true;
    try {
      // It was a raw ENOENT from renaming the build file into place (exit 70, a stack trace).
      await expect(cf.reindex()).rejects.toMatchObject({
        code: 'USAGE',
        message: expect.stringMatching(/^the index being built was deleted while it was built/),
        details: { path: expect.stringMatching(/\.build-\d+$/) },
      });
    } finally {
      removeIndexFiles = false;
    }
    expect(readdirSync(dir).filter((n) => n.startsWith('index-'))).toEqual([]);
    expect((await cf.entries()).map((e) => e.step_id)).toEqual([1]);
    await cf.close();
  });
});

describe('a reindex whose renamed index file is deleted while it analyses', () => {
  it('is one usage error naming the index file, not a success', async () => {
    const dir = join(tempDir().dir, '.contextfold');
    const cf = await ContextFold.open({ dir, tokenizer: 'reference' });
    await cf.foldMany([
      { stepId: 1, summary: 'one', content: 'first payload' },
      { stepId: 2, summary: 'two', content: 'second payload' },
    ]);
    let deleted = false;
    const rmIndex = () => {
      if (deleted) return;
      deleted = true;
      for (const n of readdirSync(dir)) if (n.startsWith('index-')) rmSync(join(dir, n));
    };
    // It reported {"nodes":2,"analysed":2,"index":".../index-2-….sqlite"}, a file that was gone.
    await expect(cf.reindex({ onProgress: rmIndex })).rejects.toMatchObject({
      code: 'USAGE',
      message: expect.stringMatching(
        /^the index .*index-\d+-[0-9a-f]{8}\.sqlite was deleted or replaced while it was written/,
      ),
      details: { path: expect.stringMatching(/index-\d+-[0-9a-f]{8}\.sqlite$/) },
    });
    expect(readdirSync(dir).filter((n) => n.startsWith('index-'))).toEqual([]);
    // The next operation builds the index again; the store's files were never touched.
    expect((await cf.entries()).map((e) => e.step_id)).toEqual([1, 2]);
    expect((await cf.reindex()).analysed).toBe(2);
    await cf.close();
  });
});

describe('a rebuild whose new index file cannot be created', () => {
  it('fails with the cause and leaves no build file behind', async () => {
    const dir = join(tempDir().dir, '.contextfold');
    const cf = await ContextFold.open({ dir, tokenizer: 'reference' });
    await cf.foldMany([{ stepId: 1, summary: 's', content: 'c' }]);
    await cf.close();
    for (const n of readdirSync(dir)) if (n.startsWith('index-')) rmSync(join(dir, n));
    const again = await ContextFold.open({ dir, tokenizer: 'reference' });
    full = true;
    try {
      for (let i = 0; i < 3; i++) {
        await expect(again.entries()).rejects.toMatchObject({
          name: 'IndexUnusable',
          cause: { code: 'SQLITE_FULL' },
        });
      }
    } finally {
      full = false;
    }
    expect(readdirSync(dir).filter((n) => n.includes('.build-'))).toEqual([]);
    expect((await again.entries()).map((e) => e.step_id)).toEqual([1]);
    await again.close();
  });
});
