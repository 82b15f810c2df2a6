import { mkdirSync, statSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { tempDir } from '../test-utils/temp-dir.js';
import { makeDirs } from './make-dirs.js';

describe('makeDirs', () => {
  it('creates missing parents, and accepts a directory that exists', () => {
    const root = tempDir().dir;
    const dir = join(root, 'a', 'b', 'c');
    makeDirs(dir);
    expect(statSync(dir).isDirectory()).toBe(true);
    makeDirs(dir);
    mkdirSync(join(root, 'd'));
    makeDirs(join(root, 'd'));
  });

  it("throws mkdir's error for the level that cannot be created", () => {
    const root = tempDir().dir;
    writeFileSync(join(root, 'file'), '');
    expect(() => makeDirs(join(root, 'file', 'x', 'y'))).toThrow(
      expect.objectContaining({ code: 'ENOTDIR' }),
    );
    expect(() => makeDirs(join(root, 'file'))).toThrow(expect.objectContaining({ code: 'EEXIST' }));
  });
});
