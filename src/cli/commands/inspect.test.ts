import { type ChildProcess, spawn } from 'node:child_process';
import { existsSync, mkdirSync, readFileSync, statSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { buildOddStore } from '../../inspect/test-utils/fixtures.js';
import { CLI, runCliProcess } from '../../test-utils/cli.js';
import { tempDir } from '../../test-utils/temp-dir.js';

const tmp = tempDir('cf-inspect-cli-');
const dir = join(tmp.dir, '.contextfold');

beforeAll(async () => {
  await buildOddStore(dir);
});
afterAll(() => tmp.cleanup());

/** Starts `contextfold inspect` and resolves with its first stdout line and its stderr so far. */
function start(
  args: string[],
  env: NodeJS.ProcessEnv = process.env,
): Promise<{ child: ChildProcess; line: string; stderr: () => string }> {
  const child = spawn(process.execPath, [CLI, '--dir', dir, ...args], {
    stdio: ['ignore', 'pipe', 'pipe'],
    env,
  });
  let out = '';
  let err = '';
  child.stderr!.on('data', (d) => {
    err += String(d);
  });
  return new Promise((resolve, reject) => {
    child.stdout!.on('data', (d) => {
      out += String(d);
      const nl = out.indexOf('\n');
      if (nl >= 0) resolve({ child, line: out.slice(0, nl), stderr: () => err });
    });
    child.once('exit', (code) => reject(new Error(`exited ${code} before printing: ${err}`)));
  });
}

function stop(child: ChildProcess): Promise<number | null> {
  return new Promise((resolve) => {
    child.once('exit', (code) => resolve(code));
    child.kill('SIGTERM');
  });
}

describe('contextfold inspect', () => {
  it('--json prints one line with the URL; the URL serves, without the token 403; SIGTERM exits 0', async () => {
    const { child, line } = await start(['--json', 'inspect', '--no-open']);
    const r = JSON.parse(line) as {
      url: string;
      port: number;
      stores: string[];
      warnings: string[];
    };
    expect(r.url).toMatch(/^http:\/\/127\.0\.0\.1:\d+\/[A-Za-z0-9_-]{43}\/$/);
    expect(r.stores).toEqual(['.']);
    expect(r.warnings).toEqual([]);
    expect((await fetch(r.url)).status).toBe(200);
    expect((await fetch(`${r.url}api/overview`)).status).toBe(200);
    expect((await fetch(`http://127.0.0.1:${r.port}/api/overview`)).status).toBe(403);
    expect(await stop(child)).toBe(0);
  });

  it.skipIf(process.platform !== 'linux')(
    '--open hands the opener a private redirect page, never the token (argv is visible to ps)',
    async () => {
      // A stand-in xdg-open that records what it was given.
      const bin = join(tmp.dir, 'fake-bin');
      mkdirSync(bin, { recursive: true });
      const argv = join(tmp.dir, 'opener-argv');
      writeFileSync(join(bin, 'xdg-open'), `#!/bin/sh\nprintf '%s\\n' "$@" > '${argv}'\n`, {
        mode: 0o755,
      });
      const { child, line } = await start(['--json', 'inspect'], {
        ...process.env,
        PATH: `${bin}:${process.env.PATH}`,
      });
      const { url } = JSON.parse(line) as { url: string };
      const token = url.split('/')[3]!;
      for (let i = 0; i < 100 && !existsSync(argv); i++)
        await new Promise((r) => setTimeout(r, 50));
      const given = readFileSync(argv, 'utf8').trim();
      expect(given).not.toContain(token);
      expect(given).toMatch(/^file:\/\/.*\/open\.html$/);
      const page = fileURLToPath(given);
      expect(statSync(page).mode & 0o777).toBe(0o600);
      expect(statSync(dirname(page)).mode & 0o777).toBe(0o700);
      expect(readFileSync(page, 'utf8')).toContain(
        `<meta http-equiv="refresh" content="0;url=${url}">`,
      );
      expect(await stop(child)).toBe(0);
      expect(existsSync(dirname(page))).toBe(false);
    },
  );

  it('prints the URL for a person too', async () => {
    const { child, line } = await start(['inspect', '--no-open']);
    expect(line).toMatch(/^contextfold inspect: 1 store\(s\) \(\.\), read-only$/);
    expect(await stop(child)).toBe(0);
  });

  it('refuses a non-loopback host without --allow-remote (one line, exit 1)', () => {
    const r = runCliProcess(['--dir', dir, 'inspect', '--no-open', '--host', '0.0.0.0']);
    expect(r.code).toBe(1);
    expect(r.stderr.trim().split('\n')).toHaveLength(1);
    expect(r.stderr).toMatch(/refusing to bind 0\.0\.0\.0.*--allow-remote/);
    const j = runCliProcess(['--dir', dir, '--json', 'inspect', '--no-open', '--host', '0.0.0.0']);
    expect(JSON.parse(j.stdout)).toMatchObject({ code: 'USAGE' });
  });

  it('binds a non-loopback host with --allow-remote and prints a warning', async () => {
    const { child, line, stderr } = await start([
      '--json',
      'inspect',
      '--no-open',
      '--host',
      '0.0.0.0',
      '--allow-remote',
    ]);
    expect(JSON.parse(line).warnings[0]).toMatch(/not loopback/);
    expect(stderr()).toMatch(/^contextfold: warning: the inspector listens on 0\.0\.0\.0/);
    expect(await stop(child)).toBe(0);
  });

  it('bad input is one line: a bad port, a directory without a store', () => {
    const p = runCliProcess(['--dir', dir, 'inspect', '--no-open', '--port', 'x']);
    expect(p.code).toBe(1);
    expect(p.stderr).toMatch(/--port must be a non-negative integer/);
    const d = runCliProcess(['--dir', join(tmp.dir, 'missing'), 'inspect', '--no-open']);
    // As every other command on a missing store: the StoreNotFoundError line, exit 1.
    const status = runCliProcess(['--dir', join(tmp.dir, 'missing'), 'status']);
    expect(d.code).toBe(1);
    expect(d.stderr).toBe(status.stderr);
    expect(d.stderr).toMatch(/^contextfold: StoreNotFoundError: no store at .*--dir DIR\n$/);
  });
});
