import * as fs from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it, vi } from 'vitest';
import { ContextFold } from '../engine/context-fold.js';
import { tempDir } from '../test-utils/temp-dir.js';

/**
 * A full disk for one kind of write: `journal`, a write of journal fold records is cut short
 * (half, then ENOSPC); `snapshot`, a write of `recall_index.json` fails.
 */
let full: 'journal' | 'snapshot' | null = null;
const enospc = () =>
  Object.assign(new Error('ENOSPC: no space left on device, write'), { code: 'ENOSPC' });

vi.mock('node:fs', async (importOriginal) => {
  const real = await importOriginal<typeof import('node:fs')>();
  let cut = false;
  const writeSync = (fd: number, data: Uint8Array, off = 0, len = data.length - off): number => {
    if (full !== 'journal' || !Buffer.from(data).includes('"op":"fold"')) {
      return real.writeSync(fd, data, off, len);
    }
    if (!cut) {
      cut = true;
      return real.writeSync(fd, data, off, Math.floor(len / 2));
    }
    cut = false;
    throw enospc();
  };
  const write = ((fd: number, data: Uint8Array, ...rest: unknown[]) => {
    const done = rest[rest.length - 1] as (e: Error | null, n?: number) => void;
    if (full === 'snapshot' && Buffer.from(data).includes('"ipcf_version"')) {
      process.nextTick(() => done(enospc()));
      return;
    }
    (real.write as (...a: unknown[]) => void)(fd, data, ...rest);
  }) as typeof real.write;
  return { ...real, default: { ...real, writeSync, write }, writeSync, write };
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
    full = 'journal';
    try {
      await expect(cf.foldMany(turns(100, 30))).rejects.toMatchObject({ code: 'ENOSPC' });
    } finally {
      full = null;
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
    full = 'journal';
    try {
      await expect(cf.foldMany(turns(0, 3))).rejects.toMatchObject({ code: 'ENOSPC' });
    } finally {
      full = null;
    }
    expect(fs.existsSync(join(dir, 'recall_index.journal'))).toBe(false);
    expect(fs.readdirSync(join(dir, 'cold_nodes'))).toEqual([]);
    await cf.foldMany(turns(0, 3));
    expect(await cf.validate()).toMatchObject({ ok: true, checked: 3, problems: [] });
    await cf.close();
  });

  it('a compaction after the commit that fails does not fail the fold: it warns, the fold stands', async () => {
    const dir = join(tempDir().dir, '.contextfold');
    const warnings: string[] = [];
    const cf = await ContextFold.open({
      dir,
      tokenizer: 'reference',
      journalCompactThreshold: 4,
      onWarning: (w) => warnings.push(w.code),
    });
    full = 'snapshot';
    try {
      // Six records outgrow the journal's threshold: the fold's commit is followed by a compaction.
      expect(await cf.foldMany(turns(0, 6))).toHaveLength(6);
    } finally {
      full = null;
    }
    expect(warnings).toEqual(['COMPACTION_FAILED']);
    expect(fs.existsSync(join(dir, 'recall_index.json'))).toBe(false);
    expect(Buffer.from(await cf.hydrateBytes(5)).toString('utf8')).toBe('payload 5\r\n\u0000');
    await cf.close();
    const again = await ContextFold.open({ dir, tokenizer: 'reference' });
    expect(await again.validate()).toMatchObject({ ok: true, checked: 6, problems: [] });
    expect(fs.readdirSync(dir).filter((n) => n.includes('.tmp-'))).toEqual([]);
    await again.close();
  });
});
