import { appendFileSync, renameSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { tempDir } from '../test-utils/temp-dir.js';
import { fileIdentity, sameIdentity } from './file-identity.js';

describe('fileIdentity', () => {
  it('is null for an absent file, and for a path under an absent directory', () => {
    const { dir } = tempDir();
    expect(fileIdentity(join(dir, 'absent'))).toBeNull();
    expect(fileIdentity(join(dir, 'absent-dir', 'file'))).toBeNull();
    expect(sameIdentity(null, fileIdentity(join(dir, 'absent')))).toBe(true);
  });

  it('throws for a path that cannot be a file (a file used as a directory)', () => {
    const { dir } = tempDir();
    writeFileSync(join(dir, 'f'), 'x');
    expect(() => fileIdentity(join(dir, 'f', 'below'))).toThrow(/ENOTDIR/);
  });

  it('tells an append and a rename over the file from the version it recorded', () => {
    const { dir } = tempDir();
    const path = join(dir, 'f');
    writeFileSync(path, 'a');
    const first = fileIdentity(path);
    expect(first).not.toBeNull();
    expect(sameIdentity(first, fileIdentity(path))).toBe(true);
    appendFileSync(path, 'b');
    const appended = fileIdentity(path);
    expect(appended?.size).toBe(2);
    expect(sameIdentity(first, appended)).toBe(false);
    writeFileSync(join(dir, 'g'), 'ab');
    renameSync(join(dir, 'g'), path);
    expect(fileIdentity(path)?.ino).not.toBe(appended?.ino);
  });
});
