import * as fs from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it, vi } from 'vitest';
import { ContextFold } from '../engine/context-fold.js';
import { tempDir } from '../test-utils/temp-dir.js';

/** While set, a write of journal fold records is cut short by a full disk (half, then ENOSPC). */
let diskFull = false;

vi.mock('node:fs', async (importOriginal) => {
  const real = await importOriginal<typeof import('node:fs')>();
  let cut = false;
  const writeSync = (fd: number, data: Uint8Array, off = 0, len = data.length - off): number => {
    if (!diskFull || !Buffer.from(data).includes('"op":"fold"')) {
      return real.writeSync(fd, data, off, len);
    }
    if (!cut) {
      cut = true;
      return real.writeSync(fd, data, off, Math.floor(len / 2));
    }
    cut = false;
    throw Object.assign(new Error('ENOSPC: no space left on device, write'), { code: 'ENOSPC' });
  };
  return { ...real, default: { ...real, writeSync }, writeSync };
});

const turns = (from: number, n: number) =>
  Array.from({ length: n }, (_, i) => ({
    stepId: from + i,
    summary: `turn ${from + i}`,
    content: `payload ${from + i}\r\n\u0000`,
  }));

describe('a journal append cut short by a full disk', () => {
  it('commits nothing of the batch: journal as before, no node file left, the batch folds again', async () => {
    const dir = join(tempDir().dir, '.contextfold');
    const cf = await ContextFold.open({ dir, tokenizer: 'reference' });
    await cf.foldMany(turns(0, 5));
    const journal = join(dir, 'recall_index.journal');
    const before = fs.readFileSync(journal);
    diskFull = true;
    try {
      await expect(cf.foldMany(turns(100, 30))).rejects.toMatchObject({ code: 'ENOSPC' });
    } finally {
      diskFull = false;
    }
    expect(fs.readFileSync(journal).equals(before)).toBe(true);
    expect(fs.readdirSync(join(dir, 'cold_nodes'))).toHaveLength(5);
    expect(await cf.validate()).toMatchObject({ ok: true, checked: 5, problems: [] });
    const again = await cf.foldMany(turns(100, 30));
    expect(again.filter((r) => !r.already_folded)).toHaveLength(30);
    expect(Buffer.from(await cf.hydrateBytes(129)).toString('utf8')).toBe('payload 129\r\n\u0000');
    await cf.close();
  });

  it('a journal the failed append would have created is not left behind', async () => {
    const dir = join(tempDir().dir, '.contextfold');
    const cf = await ContextFold.open({ dir, tokenizer: 'reference' });
    diskFull = true;
    try {
      await expect(cf.foldMany(turns(0, 3))).rejects.toMatchObject({ code: 'ENOSPC' });
    } finally {
      diskFull = false;
    }
    expect(fs.existsSync(join(dir, 'recall_index.journal'))).toBe(false);
    expect(fs.readdirSync(join(dir, 'cold_nodes'))).toEqual([]);
    await cf.foldMany(turns(0, 3));
    expect(await cf.validate()).toMatchObject({ ok: true, checked: 3, problems: [] });
    await cf.close();
  });
});
