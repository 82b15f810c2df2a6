import { existsSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { tempDir } from '../test-utils/temp-dir.js';
import { makeTempDir } from './temp-dir.js';

describe('makeTempDir', () => {
  it('makes a new directory under the base', () => {
    const base = tempDir().dir;
    const dir = makeTempDir('cf-x-', base);
    expect(dir.startsWith(join(base, 'cf-x-'))).toBe(true);
    expect(existsSync(dir)).toBe(true);
  });

  it('a base that is missing or a file is a usage error naming TMPDIR', () => {
    const root = tempDir().dir;
    writeFileSync(join(root, 'file'), 'x');
    for (const [base, code] of [
      [join(root, 'missing'), 'ENOENT'],
      [join(root, 'file'), 'ENOTDIR'],
    ] as const) {
      expect(() => makeTempDir('cf-x-', base)).toThrow(
        expect.objectContaining({
          code: 'USAGE',
          message: `cannot create a temporary directory under ${base} (${code}): set TMPDIR to a writable directory`,
        }),
      );
    }
  });
});
