import { spawn } from 'node:child_process';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import {
  ANTHROPIC_JSON,
  cannedReply,
  startFakeUpstream,
} from '../../adapters/proxy/test-utils/fake-upstream.js';
import { CLI, runCliProcess } from '../../test-utils/cli.js';
import { tempDir } from '../../test-utils/temp-dir.js';

const tmp = tempDir('cf-proxy-cli-');
afterAll(() => tmp.cleanup());

/** Starts `contextfold proxy` and resolves once it printed `lines` lines. */
function start(args: string[], lines: number) {
  const child = spawn(process.execPath, [CLI, ...args], { stdio: ['ignore', 'pipe', 'pipe'] });
  let out = '';
  let err = '';
  child.stderr.on('data', (d: Buffer) => {
    err += d.toString('utf8');
  });
  const ready = new Promise<string[]>((ok, fail) => {
    child.stdout.on('data', (d: Buffer) => {
      out += d.toString('utf8');
      if (out.split('\n').length > lines) ok(out.split('\n'));
    });
    child.once('exit', () => fail(new Error(`proxy exited early: ${err}`)));
  });
  const exited = new Promise<number>((ok) => child.once('exit', (code) => ok(code ?? -1)));
  return { child, ready, exited, output: () => out, errors: () => err };
}

describe('contextfold proxy', () => {
  it('prints the URL and the lines to set, logs one line per call, stops on SIGTERM', async () => {
    const up = await startFakeUpstream(cannedReply());
    const dir = join(tmp.dir, 'human', '.contextfold');
    const p = start(['--dir', dir, 'proxy', '--upstream', up.url, '--port', '0'], 3);
    const [head, anthropic, openai] = await p.ready;
    const url = /listening on (http:\/\/127\.0\.0\.1:\d+) → /.exec(head!)![1]!;
    expect(anthropic).toBe(`export ANTHROPIC_BASE_URL=${url}`);
    expect(openai).toBe(`export OPENAI_BASE_URL=${url}/v1`);
    const res = await fetch(`${url}/v1/messages`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', 'x-api-key': 'sk-cli-secret-1' },
      body: JSON.stringify({
        model: 'm',
        max_tokens: 5,
        messages: [{ role: 'user', content: 'hi' }],
      }),
    });
    expect(await res.text()).toBe(ANTHROPIC_JSON);
    for (let i = 0; i < 50 && !p.output().includes('messages auto-'); i++) {
      await new Promise((ok) => setTimeout(ok, 20));
    }
    p.child.kill('SIGTERM');
    expect(await p.exited).toBe(0);
    const log = p
      .output()
      .split('\n')
      .filter((l) => l.startsWith('messages '));
    expect(log).toHaveLength(1);
    expect(log[0]).toMatch(
      /^messages auto-[0-9a-f]{24} turn 0: \d+ → \d+ tokens \(saved 0\) · 200 ok in [\d.]+ ms$/,
    );
    expect(p.output()).not.toContain('sk-cli-secret-1');
    expect(p.errors()).toBe('');
    await up.close();
  });

  it('--json: one JSON object to start, then one per call', async () => {
    const up = await startFakeUpstream(cannedReply());
    const dir = join(tmp.dir, 'json', '.contextfold');
    const p = start(['--dir', dir, '--json', 'proxy', '--upstream', up.url, '--port', '0'], 1);
    const first = JSON.parse((await p.ready)[0]!);
    expect(first).toMatchObject({
      upstream: up.url,
      env: { OPENAI_BASE_URL: `${first.listening}/v1` },
    });
    await fetch(`${first.listening}/v1/chat/completions`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: '{"messages": [',
    });
    for (let i = 0; i < 50 && p.output().split('\n').length < 3; i++) {
      await new Promise((ok) => setTimeout(ok, 20));
    }
    p.child.kill('SIGINT');
    expect(await p.exited).toBe(0);
    const refused = JSON.parse(p.output().split('\n')[1]!);
    expect(refused).toMatchObject({
      kind: 'refused',
      api: 'openai',
      status: 400,
      error: 'request body is not valid JSON',
    });
    await up.close();
  });

  it('refuses bad options with one line, before listening', () => {
    const r = runCliProcess(['proxy']);
    expect(r.code).toBe(1);
    expect(r.stderr).toBe(
      'contextfold: UsageError: proxy needs --upstream URL (e.g. https://api.anthropic.com or https://api.openai.com)\n',
    );
    const j = runCliProcess(['--json', 'proxy', '--upstream', 'ftp://x']);
    expect(j.code).toBe(1);
    expect(JSON.parse(j.stdout)).toMatchObject({
      code: 'USAGE',
      message: "upstream 'ftp://x' must be an http:// or https:// URL",
    });
    expect(runCliProcess(['proxy', '--upstream', 'http://x', '--port', 'eighty']).stderr).toMatch(
      /--port must be a non-negative integer/,
    );
    // The library's check named its option ('budget must be an integer >= 1, got 0'), not the flag.
    for (const [flag, value, line] of [
      ['--budget', '0', "--budget must be a positive integer (1 or more), got '0'"],
      ['--max-body', '0', "--max-body must be a positive integer (1 or more), got '0'"],
      ['--timeout', '0', "--timeout must be a positive integer (1 or more), got '0'"],
      ['--port', '70000', '--port must be at most 65535, got 70000'],
    ] as const) {
      expect(runCliProcess(['proxy', '--upstream', 'http://x', flag, value]).stderr).toBe(
        `contextfold: UsageError: ${line}\n`,
      );
    }
    // OPENAI_BASE_URL ends in /v1: every call went to /v1/v1/… and got the upstream's 404.
    expect(runCliProcess(['proxy', '--upstream', 'https://api.openai.com/v1']).stderr).toBe(
      "contextfold: UsageError: upstream 'https://api.openai.com/v1' ends in /v1, but clients send /v1/… paths: give the server's base without it (--upstream https://api.openai.com)\n",
    );
  });
});
