import { type ChildProcess, spawn } from 'node:child_process';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { createInterface } from 'node:readline';
import { fileURLToPath } from 'node:url';
import { afterAll, expect, it } from 'vitest';
import {
  ANTHROPIC_JSON,
  type FakeUpstream,
  startFakeUpstream,
} from '../../adapters/proxy/test-utils/fake-upstream.js';
import { ContextFold } from '../../engine/context-fold.js';
import { describePg, pgStoreUrl } from '../../test-utils/pg.js';
import { tempDir } from '../../test-utils/temp-dir.js';
import { childPgUrl } from './pg-url.js';

/**
 * Folds per process: 500 with CONTEXTFOLD_TEST_FULL=1 (the 8 × 500, about a minute on
 * two cores), 25 in the suite's fast variant.
 */
const FULL = process.env.CONTEXTFOLD_TEST_FULL === '1';
const PER_PROCESS = FULL ? 500 : 25;
/** CLI folds per invocation: each writer runs several CLI processes one after another. */
const PER_CLI_RUN = FULL ? 50 : 5;
const WRITERS = 6;
const BIN = fileURLToPath(new URL('../../../dist/cli/bin.js', import.meta.url));

interface Run {
  code: number | null;
  stdout: string;
  stderr: string;
}

function cli(args: string[]): Promise<Run> {
  return new Promise((resolve) => {
    const child = spawn(process.execPath, [BIN, ...args], { stdio: ['ignore', 'pipe', 'pipe'] });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (d: Buffer) => {
      stdout += d;
    });
    child.stderr.on('data', (d: Buffer) => {
      stderr += d;
    });
    child.on('close', (code) => resolve({ code, stdout, stderr }));
  });
}

const children: ChildProcess[] = [];
let upstream: FakeUpstream | null = null;
afterAll(async () => {
  for (const c of children) c.kill('SIGTERM');
  await upstream?.close();
});

/** Starts `contextfold proxy` on a free port; resolves with its URL. */
async function startProxyProcess(store: string, upstreamUrl: string): Promise<string> {
  const child = spawn(
    process.execPath,
    [
      BIN,
      '--store',
      store,
      '--json',
      '--tokenizer',
      'reference',
      'proxy',
      '--upstream',
      upstreamUrl,
      '--port',
      '0',
      '--budget',
      '400',
      '--keep-recent',
      '2',
      '--fold-threshold',
      '8',
    ],
    { stdio: ['ignore', 'pipe', 'pipe'] },
  );
  children.push(child);
  let err = '';
  child.stderr!.on('data', (d: Buffer) => {
    err += d;
  });
  const lines = createInterface({ input: child.stdout! });
  return new Promise((resolve, reject) => {
    child.on('exit', (code) => reject(new Error(`proxy exited ${code}: ${err}`)));
    lines.once('line', (line) => resolve((JSON.parse(line) as { listening: string }).listening));
  });
}

/** The user text of turn `i` of a conversation (long enough to be folded later). */
function userText(conv: string, i: number): string {
  return `${conv} turn ${i}: service ${conv}-svc-${i} listens on port ${10000 + i}; ${'details '.repeat(12)}`;
}

/** Sends turn `upto` of a conversation (its whole history) through a proxy. */
async function send(proxyUrl: string, conv: string, upto: number, last?: string): Promise<void> {
  const messages: { role: string; content: string }[] = [];
  for (let i = 0; i < upto; i++) {
    messages.push({ role: 'user', content: userText(conv, i) });
    messages.push({ role: 'assistant', content: `noted ${i}` });
  }
  messages.push({ role: 'user', content: last ?? userText(conv, upto) });
  const res = await fetch(`${proxyUrl}/v1/messages`, {
    method: 'POST',
    headers: {
      'content-type': 'application/json',
      'x-api-key': 'sk-ant-test-key',
      'anthropic-version': '2023-06-01',
      'x-contextfold-session': conv,
    },
    body: JSON.stringify({ model: 'claude-sonnet-4-5', max_tokens: 16, messages }),
  });
  expect(res.status, await res.clone().text()).toBe(200);
  await res.arrayBuffer();
}

async function entriesOf(store: string): Promise<number> {
  const cf = await ContextFold.open({ store, tokenizer: 'reference', mustExist: true });
  try {
    return (await cf.entriesPage({ limit: 0 })).total;
  } finally {
    await cf.close();
  }
}

describePg('eight processes on one database: two proxies and six CLI writers', () => {
  it(`${WRITERS} CLI writers × ${PER_PROCESS} folds and two proxies × ${PER_PROCESS} folds: all present, valid, shared`, async () => {
    const work = tempDir().dir;
    const store = pgStoreUrl('team');
    upstream = await startFakeUpstream(() => ({ kind: 'json', body: ANTHROPIC_JSON }));
    const [p1, p2] = await Promise.all([
      startProxyProcess(store, upstream.url),
      startProxyProcess(store, upstream.url),
    ]);
    const writer = async (w: number) => {
      for (let start = 0; start < PER_PROCESS; start += PER_CLI_RUN) {
        const file = join(work, `w${w}-${start}.jsonl`);
        const lines = [];
        for (let i = start; i < Math.min(PER_PROCESS, start + PER_CLI_RUN); i++) {
          const step = w * 100_000 + i;
          lines.push(
            JSON.stringify({
              step_id: step,
              summary: `writer ${w} fold ${i}: cache node-${w}-${i} warmed on port ${20000 + i}`,
              raw_content: `$ warm node-${w}-${i}\nok ${w}-${i}\n`,
            }),
          );
        }
        writeFileSync(file, `${lines.join('\n')}\n`);
        const r = await cli([
          '--store',
          store,
          '--tokenizer',
          'reference',
          'fold',
          '--jsonl',
          file,
        ]);
        expect(r.code, r.stderr).toBe(0);
      }
    };
    // A proxy conversation folds one older turn per call once it is past its budget: keep
    // talking until its store holds PER_PROCESS folds.
    const talk = async (url: string, conv: string) => {
      const sessionStore = childPgUrl(store, ['sessions', conv]);
      let turn = 1;
      for (;;) {
        await send(url, conv, turn++);
        if (turn % 5 === 0 && (await entriesOf(sessionStore)) >= PER_PROCESS) return turn;
      }
    };
    const [turnsA, turnsB] = await Promise.all([
      talk(p1, 'conv-a'),
      talk(p2, 'conv-b'),
      ...Array.from({ length: WRITERS }, (_, w) => writer(w)),
    ]);
    // Every CLI fold present, and the shared store valid (another process's view).
    const v = await cli(['--store', store, '--json', 'validate']);
    expect(v.code, v.stdout + v.stderr).toBe(0);
    expect(JSON.parse(v.stdout)).toMatchObject({ ok: true, checked: WRITERS * PER_PROCESS });
    // A page folded by one writer is paged in by another process.
    const scan = await cli([
      '--store',
      store,
      '--json',
      'scan',
      'which port is cache node-3-7 warmed on?',
    ]);
    expect(scan.code, scan.stderr).toBe(0);
    expect(
      (JSON.parse(scan.stdout) as { selected: { step_id: number }[] }).selected[0]?.step_id,
    ).toBe(300_007);
    // Proxy A's conversation continued through proxy B (a load balancer's next pick): B opens
    // the session from the database and pages in what A folded.
    for (const [conv, turns] of [['conv-a', turnsA] as const, ['conv-b', turnsB] as const]) {
      const sessionStore = childPgUrl(store, ['sessions', conv]);
      expect(await entriesOf(sessionStore)).toBeGreaterThanOrEqual(PER_PROCESS);
      const sv = await cli(['--store', sessionStore, '--json', 'validate']);
      expect(JSON.parse(sv.stdout)).toMatchObject({ ok: true });
      expect(turns).toBeGreaterThan(1);
    }
    const before = upstream.requests.length;
    await send(p2, 'conv-a', turnsA, 'Which port does service conv-a-svc-1 listen on?');
    const sent = upstream.requests[before]!.body.toString('utf8');
    expect(sent).toContain('10001');
    console.log(
      `[eight-process] ${WRITERS} writers × ${PER_PROCESS} CLI folds (${PER_PROCESS / PER_CLI_RUN} CLI runs each), proxies: ${turnsA} and ${turnsB} calls for ≥ ${PER_PROCESS} folds each`,
    );
  }, 600_000);
});
