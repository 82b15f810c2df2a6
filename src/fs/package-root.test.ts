import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { packageJson, packagePath, packageRoot } from './package-root.js';

const REPO = fileURLToPath(new URL('../../', import.meta.url)).replace(/\/$/, '');

describe('packageRoot', () => {
  it("is the directory of contextfold's package.json, above this module", () => {
    expect(packageRoot()).toBe(REPO);
    expect(packagePath('guard', 'x.json')).toBe(join(REPO, 'guard', 'x.json'));
  });

  it('reads the package version once, from that package.json', () => {
    const pkg = JSON.parse(readFileSync(join(REPO, 'package.json'), 'utf8')) as {
      version: string;
    };
    expect(packageJson().version).toBe(pkg.version);
    expect(packageJson()).toBe(packageJson());
  });
});
