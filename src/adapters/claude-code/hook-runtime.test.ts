import { mkdirSync, symlinkSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { beforeAll, describe, expect, it } from 'vitest';
import { CLI } from '../../test-utils/cli.js';
import { type InstalledCopy, installedCopy } from '../../test-utils/installed-copy.js';
import { tempDir } from '../../test-utils/temp-dir.js';
import { findOnPath, resolveHookCommand, runtimeKind } from './hook-runtime.js';

const tmp = tempDir('cf-runtime-');
let copy: InstalledCopy;
let npx: InstalledCopy;
beforeAll(() => {
  copy = installedCopy(join(tmp.dir, 'prefix'));
  npx = installedCopy(
    join(tmp.dir, 'npx-prefix'),
    join(tmp.dir, 'home', '.npm', '_npx', '3f2a9c1e', 'node_modules', 'contextfold'),
  );
  return () => tmp.cleanup();
});

const base = { projectDir: '/repo', scope: 'project' as const, version: '0.1.0' };

describe('where the hooks run contextfold from', () => {
  it('classifies an installed copy, npx cache, and this source checkout (links resolved)', () => {
    expect(runtimeKind(copy.binPath)).toBe('installed');
    expect(runtimeKind(join(copy.binDir, 'contextfold'))).toBe('installed');
    expect(runtimeKind(npx.binPath)).toBe('npx-cache');
    expect(runtimeKind(CLI)).toBe('source');
    // `npm link` / `npm install -g .`: a global link into the checkout is still the checkout.
    const linked = join(tmp.dir, 'linked', 'lib', 'node_modules');
    mkdirSync(linked, { recursive: true });
    symlinkSync(join(CLI, '..', '..', '..'), join(linked, 'contextfold'));
    expect(runtimeKind(join(linked, 'contextfold', 'dist', 'cli', 'bin.js'))).toBe('source');
  });

  it('finds the first executable on PATH', () => {
    const notExec = join(tmp.dir, 'plain');
    mkdirSync(notExec, { recursive: true });
    writeFileSync(join(notExec, 'contextfold'), '#!/bin/sh\n');
    expect(findOnPath('contextfold', `${notExec}:${copy.binDir}`)).toBe(
      join(copy.binDir, 'contextfold'),
    );
    expect(findOnPath('contextfold', notExec)).toBeNull();
    expect(findOnPath('contextfold', undefined)).toBeNull();
  });

  it('an installed copy runs itself; a checkout runs the installed contextfold on PATH', () => {
    expect(resolveHookCommand({ ...base, binPath: copy.binPath, pathEnv: '' })).toEqual({
      command: `node ${copy.binPath}`,
      source: 'this-installation',
    });
    expect(resolveHookCommand({ ...base, binPath: CLI, pathEnv: copy.binDir })).toEqual({
      command: join(copy.binDir, 'contextfold'),
      source: 'path',
    });
  });

  it('refuses a checkout with nothing installed on PATH, naming how to install a copy', () => {
    const linkBin = join(tmp.dir, 'link-bin');
    mkdirSync(linkBin, { recursive: true });
    symlinkSync(CLI, join(linkBin, 'contextfold')); // what npm link puts on PATH
    for (const pathEnv of ['', linkBin]) {
      expect(() => resolveHookCommand({ ...base, binPath: CLI, pathEnv })).toThrow(
        /^contextfold runs from a source checkout \(.+\) whose dist\/ is rebuilt by npm run build and npm test, and no installed contextfold is on PATH: install a copy first \(cd .+ && npm pack && npm install -g \.\/contextfold-0\.1\.0\.tgz\)/,
      );
    }
  });

  it("refuses npx's cache, from this CLI or in --command", () => {
    expect(() => resolveHookCommand({ ...base, binPath: npx.binPath, pathEnv: '' })).toThrow(
      /^contextfold is running from npx's cache \(.*\/_npx\/3f2a9c1e\/node_modules\/contextfold\), which npm clears at any time/,
    );
    expect(() =>
      resolveHookCommand({
        ...base,
        binPath: copy.binPath,
        pathEnv: '',
        command: 'node /home/me/.npm/_npx/3f2a9c1e/node_modules/contextfold/dist/cli/bin.js',
      }),
    ).toThrow(/^--command runs contextfold from npx's cache/);
    expect(
      resolveHookCommand({ ...base, binPath: npx.binPath, pathEnv: '', command: 'contextfold' }),
    ).toEqual({ command: 'contextfold', source: 'given' });
  });
});
