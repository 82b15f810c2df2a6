import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { replaySession } from '../../harness/replay.js';
import { tempDir } from '../../test-utils/temp-dir.js';
import type { ProxyLogLine } from './call-log.js';
import { startProxy } from './server.js';
import { sessionStoreDir } from './session-pool.js';
import { cannedReply, startFakeUpstream } from './test-utils/fake-upstream.js';

const tmp = tempDir('cf-proxy-replicas-');
afterAll(() => tmp.cleanup());

type Msg = { role: string; content: unknown };

/** A tool loop after k calls: each reads a module, the later ones ask about the first. */
function history(calls: number): Msg[] {
  const out: Msg[] = [{ role: 'user', content: 'Audit the modules.' }];
  for (let k = 1; k <= calls; k++) {
    const id = `toolu_${k}`;
    out.push({
      role: 'assistant',
      content: [{ type: 'tool_use', id, name: 'Read', input: { file_path: `src/mod${k}.ts` } }],
    });
    const lines = Array.from({ length: 40 }, (_, i) => `export const v${i} = 'k${k}-${i}';`);
    const ask = k >= 3 ? [{ type: 'text', text: 'What did src/mod1.ts export?' }] : [];
    out.push({
      role: 'user',
      content: [{ type: 'tool_result', tool_use_id: id, content: lines.join('\n') }, ...ask],
    });
  }
  return out;
}

describe('two proxies on one store (replicas behind a load balancer)', () => {
  it('continue one conversation call after call, whichever replica gets the call', async () => {
    // Before, a replica whose open session another replica had written since failed the call
    // with a 500 ("changed since this writer read it … reopen the session"): one call in two
    // when calls alternated.
    const up = await startFakeUpstream(cannedReply());
    const dir = join(tmp.dir, '.contextfold');
    const logs: ProxyLogLine[] = [];
    const options = { upstream: up.url, port: 0, dir, budget: 1500, keepRecent: 1 };
    const a = await startProxy({ ...options, onLog: (l) => logs.push(l) });
    const b = await startProxy({ ...options, onLog: (l) => logs.push(l) });
    try {
      const statuses: number[] = [];
      for (let k = 1; k <= 6; k++) {
        const res = await fetch(`${(k % 2 === 1 ? a : b).url}/v1/messages`, {
          method: 'POST',
          headers: { 'content-type': 'application/json', 'x-contextfold-session': 'shared' },
          body: JSON.stringify({ model: 'm', max_tokens: 8, messages: history(k) }),
        });
        await res.text();
        statuses.push(res.status);
      }
      expect(statuses).toEqual([200, 200, 200, 200, 200, 200]);
      expect(logs.map((l) => [l.kind, (l as { turn?: number }).turn])).toEqual(
        [0, 1, 2, 3, 4, 5].map((t) => ['call', t]),
      );
      expect((await replaySession({ dir: sessionStoreDir(dir, 'shared') })).matches).toBe(true);
    } finally {
      await a.close();
      await b.close();
      await up.close();
    }
  });

  it('a conversation that forks on one replica, with a fork name the other made meanwhile', async () => {
    // Before, a replica named a new fork from the forks it had listed earlier: one the other
    // replica had made since under the same name (another conversation that left the base at
    // the same message) was taken for new, and the call failed with a 500 ("the history does
    // not continue this session").
    const up = await startFakeUpstream(cannedReply());
    const dir = join(tmp.dir, 'forks');
    const options = { upstream: up.url, port: 0, dir };
    const a = await startProxy(options);
    const b = await startProxy(options);
    const call = async (url: string, texts: string[]): Promise<[number, string | null]> => {
      const messages = texts.map((t, i) => ({ role: i % 2 ? 'assistant' : 'user', content: t }));
      const res = await fetch(`${url}/v1/messages`, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({ model: 'm', max_tokens: 8, messages }),
      });
      await res.text();
      return [res.status, res.headers.get('x-contextfold-session')];
    };
    try {
      const [, base] = await call(a.url, ['start', 'x1', 'x2']);
      // b lists the base's forks now (there are none), and makes one.
      expect((await call(b.url, ['start', 'z1', 'z2']))[0]).toBe(200);
      const [, y] = await call(a.url, ['start', 'y1', 'y2']);
      expect(y).toMatch(new RegExp(`^${base}~`));
      // Leaves the base where y did (so its fork would get y's name), then leaves y.
      const w = await call(b.url, ['start', 'y1', 'w2', 'w3', 'w4']);
      expect(w[0]).toBe(200);
      expect(w[1]).not.toBe(y);
      for (const id of [base!, y!, w[1]!]) {
        expect((await replaySession({ dir: sessionStoreDir(dir, id) })).matches).toBe(true);
      }
    } finally {
      await a.close();
      await b.close();
      await up.close();
    }
  });
});
