import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { packagePath } from '../fs/package-root.js';

// The CLI runs from a bundle (scripts/bundle-cli.mjs, part of the build): dist/cli/bin.js and
// one chunk per lazily loaded command, all in dist/cli/.
const DIR = packagePath('dist', 'cli');
const files = () => readdirSync(DIR).filter((f) => f === 'bin.js' || /^bin-.+\.js$/.test(f));

describe('the bundled CLI', () => {
  it('is what dist/cli/bin.js is, with a chunk per command loaded on demand', () => {
    expect(readFileSync(join(DIR, 'bin.js'), 'utf8')).toContain('contextfold CLI bundle');
    const chunks = files().filter((f) => f !== 'bin.js');
    expect(chunks.some((f) => f.startsWith('bin-scan-'))).toBe(true);
    expect(chunks.some((f) => f.startsWith('bin-fold-'))).toBe(true);
  });

  it('locates no file relative to its own module (a chunk is not where the source module was)', () => {
    // `new URL('../x', import.meta.url)` in a chunk resolves from dist/cli/, whatever depth the
    // module had in src/: shipped files are found through packagePath instead.
    const relative = /new URL\(\s*["'`]\.{1,2}\/[^)]*import\.meta\.url/;
    const offenders = files().filter((f) => relative.test(readFileSync(join(DIR, f), 'utf8')));
    expect(offenders).toEqual([]);
  });
});
