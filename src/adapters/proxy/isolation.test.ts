import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { replaySession } from '../../harness/replay.js';
import { readEvents } from '../../harness/session-events.js';
import { tempDir } from '../../test-utils/temp-dir.js';
import type { ProxyLogLine } from './call-log.js';
import { type RunningProxy, startProxy } from './server.js';
import { sessionStoreDir } from './session-pool.js';
import { cannedReply, type FakeUpstream, startFakeUpstream } from './test-utils/fake-upstream.js';

const SESSIONS = 6;
const CALLS = 5;
const tmp = tempDir('cf-proxy-iso-');
let up: FakeUpstream;
let proxy: RunningProxy;
const logs: ProxyLogLine[] = [];

beforeAll(async () => {
  up = await startFakeUpstream(cannedReply());
  proxy = await startProxy({
    upstream: up.url,
    port: 0,
    dir: join(tmp.dir, '.contextfold'),
    budget: 1500,
    keepRecent: 1,
    // Fewer open sessions than conversations: idle ones are closed and reopened from their log.
    maxOpenSessions: 2,
    onLog: (l) => logs.push(l),
  });
});
afterAll(async () => {
  await proxy.close();
  await up.close();
  tmp.cleanup();
});

type Msg = { role: string; content: unknown };

/**
 * Session s after k calls. Every session opens alike (same prompt, same first tool call and
 * result: the same derived id), then reads its own modules.
 */
function history(s: number, calls: number): Msg[] {
  const out: Msg[] = [{ role: 'user', content: 'Audit the repository modules one by one.' }];
  for (let k = 0; k < calls; k++) {
    const id = k === 0 ? 'toolu_readme' : `toolu_s${s}k${k}`;
    if (k === 0) {
      out.push({
        role: 'assistant',
        content: [{ type: 'tool_use', id, name: 'Read', input: { file_path: 'README.md' } }],
      });
      out.push({
        role: 'user',
        content: [{ type: 'tool_result', tool_use_id: id, content: 'Modules: see src/.' }],
      });
      continue;
    }
    out.push({
      role: 'assistant',
      content: [
        { type: 'tool_use', id, name: 'Read', input: { file_path: `src/s${s}/mod${k}.ts` } },
      ],
    });
    const lines = Array.from(
      { length: 40 },
      (_, i) => `export const v${i} = 'secret-s${s}-k${k}-${i}';`,
    );
    const result = { type: 'tool_result', tool_use_id: id, content: lines.join('\n') };
    const ask = k >= 3 ? [{ type: 'text', text: `What did src/s${s}/mod1.ts export?` }] : [];
    out.push({ role: 'user', content: [result, ...ask] });
  }
  return out;
}

async function call(s: number, k: number): Promise<string> {
  const res = await fetch(`${proxy.url}/v1/messages`, {
    method: 'POST',
    headers: {
      'content-type': 'application/json',
      'x-test-session': String(s),
      // Half the sessions name themselves; the other half share a derived id and fork.
      ...(s % 2 === 0 ? { 'x-contextfold-session': `iso-${s}` } : {}),
    },
    body: JSON.stringify({ model: 'm', max_tokens: 8, messages: history(s, k + 1) }),
  });
  await res.text();
  expect(res.status).toBe(200);
  return res.headers.get('x-contextfold-session')!;
}

describe('many conversations through one proxy', () => {
  it('never leak into each other, lose no event, and replay exactly', async () => {
    const stores = await Promise.all(
      Array.from({ length: SESSIONS }, async (_, s) => {
        const ids: string[] = [];
        for (let k = 0; k < CALLS; k++) ids.push(await call(s, k));
        return ids;
      }),
    );
    // Conversations that name themselves keep their store. The others share one while their
    // histories are the same (the first call), then each goes on in its own store for good.
    const finals = stores.map((list) => list.at(-1)!);
    expect(new Set(finals).size).toBe(SESSIONS);
    stores.forEach((list, s) => {
      if (s % 2 === 0) expect(new Set(list)).toEqual(new Set([`iso-${s}`]));
      else expect(new Set(list.slice(1)).size).toBe(1);
    });
    expect(finals.filter((id) => id.includes('~')).length).toBe(SESSIONS / 2 - 1);
    const turnsOf = new Map<string, number>();
    for (const id of stores.flat()) turnsOf.set(id, (turnsOf.get(id) ?? 0) + 1);

    // No byte of another conversation ever reached the upstream, pages included.
    expect(up.requests).toHaveLength(SESSIONS * CALLS);
    const paged = new Set<number>();
    for (const r of up.requests) {
      const s = Number(r.headers['x-test-session']);
      const text = r.body.toString('utf8');
      for (let o = 0; o < SESSIONS; o++) {
        if (o !== s) expect(text).not.toContain(`secret-s${o}-`);
      }
      if (new RegExp(`<archived_record [^]*secret-s${s}-k1-`).test(text)) paged.add(s);
    }
    // Every conversation got its own early module paged back in at least once.
    expect([...paged].sort()).toEqual([0, 1, 2, 3, 4, 5]);

    // Every call is one complete turn in its own store's log, and the log replays exactly.
    const calls = logs.filter((l) => l.kind === 'call');
    expect(calls).toHaveLength(SESSIONS * CALLS);
    for (const [id, turns] of turnsOf) {
      const dir = sessionStoreDir(join(tmp.dir, '.contextfold'), id);
      const events = readEvents(dir);
      expect(events.filter((e) => e.type === 'turn_started')).toHaveLength(turns);
      expect(events.filter((e) => e.type === 'turn_completed')).toHaveLength(turns);
      expect(events.filter((e) => e.type === 'pack_built')).toHaveLength(turns);
      expect((await replaySession({ dir })).matches).toBe(true);
    }
  }, 60_000);
});

describe('histories that leave their session', () => {
  const send = async (messages: Msg[]): Promise<string> => {
    const res = await fetch(`${proxy.url}/v1/messages`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', 'x-contextfold-session': 'rewind' },
      body: JSON.stringify({ model: 'm', max_tokens: 8, messages }),
    });
    await res.text();
    expect(res.status).toBe(200);
    return res.headers.get('x-contextfold-session')!;
  };

  it('a replay from the start, a rewind with another message: one fork each, kept call after call', async () => {
    const h = history(7, CALLS);
    const calls = (list: Msg[]) =>
      Array.from({ length: CALLS }, (_, k) => list.slice(0, 3 + 2 * k));
    for (const m of calls(h)) expect(await send(m)).toBe('rewind');
    // The same conversation again from its start (all but its last call: that one is the
    // store's history exactly): shorter than the store, so a fork, but one.
    const replay = new Set<string>();
    for (const m of calls(h).slice(0, -1)) replay.add(await send(m));
    expect(replay.size).toBe(1);
    expect([...replay][0]).toMatch(/^rewind~[0-9a-f]{16}$/);
    // Rewound to call 2 with another answer, then going on: another fork, one for all its calls.
    const other: Msg[] = [
      ...h.slice(0, 5),
      { role: 'user', content: 'Stop. Read the README instead.' },
    ];
    const branch = new Set<string>();
    for (let k = 0; k < 3; k++) {
      const more = Array.from({ length: k }, (_, j) => [
        { role: 'assistant', content: `Reading part ${j}.` },
        { role: 'user', content: `Next part ${j}.` },
      ]).flat();
      branch.add(await send([...other, ...more]));
    }
    expect(branch.size).toBe(1);
    expect(branch).not.toContain('rewind');
    expect(branch).not.toContain([...replay][0]);
    // The original conversation goes on in its own store.
    expect(await send(history(7, CALLS + 1))).toBe('rewind');
  }, 60_000);
});
