import { mkdirSync, mkdtempSync, readdirSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { isTempFileName, writeFilesDurable } from './durable-fs.js';

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
