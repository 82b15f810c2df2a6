import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { tempDir } from '../test-utils/temp-dir.js';
import { lastLine } from './last-line.js';

describe('lastLine', () => {
  it('reads the last line of a file, however long, and null for a missing or empty file', () => {
    const dir = tempDir().dir;
    const path = join(dir, 'log.jsonl');
    expect(lastLine(path)).toBeNull();
    writeFileSync(path, '');
    expect(lastLine(path)).toBeNull();
    writeFileSync(path, 'only\n');
    expect(lastLine(path)).toBe('only');
    const long = `é${'x'.repeat(200_000)}\u0000\r`;
    writeFileSync(path, `first\n${long}\n`);
    expect(lastLine(path)).toBe(long);
    writeFileSync(path, `first\n\n`);
    expect(lastLine(path)).toBe('');
  });
});
