import { mkdirSync, mkdtempSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { isTempFileName, removeLiveTemps, writeFilesDurable } from './durable-fs.js';

const scratch = (): string => mkdtempSync(join(tmpdir(), 'cf-durable-'));

describe('writeFilesDurable', () => {
  it('writes every file of a batch byte for byte, across directories, leaving no temp file', async () => {
    const dir = scratch();
    mkdirSync(join(dir, 'a'));
    mkdirSync(join(dir, 'b'));
    const files = Array.from({ length: 300 }, (_, i) => ({
      path: join(dir, i % 2 ? 'a' : 'b', `n${i}.json`),
      data: i % 3 ? `payload ${i}\r\n\u0000é` : Uint8Array.from([0xff, 0xfe, i & 0xff]),
    }));
    await writeFilesDurable(files);
    for (const f of files) {
      const want = typeof f.data === 'string' ? Buffer.from(f.data, 'utf8') : Buffer.from(f.data);
      expect(readFileSync(f.path).equals(want)).toBe(true);
    }
    const names = [...readdirSync(join(dir, 'a')), ...readdirSync(join(dir, 'b'))];
    expect(names).toHaveLength(300);
    expect(names.filter(isTempFileName)).toEqual([]);
  });

  it('fails as a whole when one file cannot be created: no file under its name, no temp left', async () => {
    const dir = scratch();
    const files = Array.from({ length: 40 }, (_, i) => ({
      // The 25th file's directory does not exist: its create fails while others are in flight.
      path: join(dir, i === 24 ? 'missing' : '.', `n${i}.json`),
      data: `payload ${i}`,
    }));
    await expect(writeFilesDurable(files)).rejects.toMatchObject({ code: 'ENOENT' });
    expect(readdirSync(dir)).toEqual([]);
  });

  it('replaces a file an earlier batch wrote under the same name, leaving nothing stray', async () => {
    const dir = scratch();
    await writeFilesDurable([{ path: join(dir, 'x.json'), data: 'one' }]);
    await writeFilesDurable([{ path: join(dir, 'x.json'), data: 'two' }]);
    expect(readFileSync(join(dir, 'x.json'), 'utf8')).toBe('two');
    expect(readdirSync(dir)).toEqual(['x.json']);
  });
});

describe('removeLiveTemps', () => {
  it("removes this process's temp files of a write in progress, and no other process's", async () => {
    // What a stop signal's handler calls: before, an interrupted batch left its temp files.
    const dir = scratch();
    const other = join(dir, '.n9.json.tmp-999999-0'); // another process's write in progress
    writeFileSync(other, 'theirs');
    const files = Array.from({ length: 5 }, (_, i) => ({
      path: join(dir, `n${i}.json`),
      data: 'x',
    }));
    const writing = writeFilesDurable(files); // its temp files exist; the fsyncs are pending
    const removed = removeLiveTemps();
    expect(removed).toHaveLength(5);
    expect(readdirSync(dir)).toEqual(['.n9.json.tmp-999999-0']);
    await expect(writing).rejects.toMatchObject({ code: 'ENOENT' });
    expect(readFileSync(other, 'utf8')).toBe('theirs');
    expect(removeLiveTemps()).toEqual([]);
  });
});
