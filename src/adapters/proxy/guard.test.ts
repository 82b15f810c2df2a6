import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  fakeSecrets,
  leakedFragments,
  secretFragments,
  secretTurn,
} from '../../test-utils/fake-secrets.js';
import { tempDir } from '../../test-utils/temp-dir.js';
import { writtenFiles } from '../../test-utils/written-bytes.js';
import { type RunningProxy, startProxy } from './server.js';
import { cannedReply, type FakeUpstream, startFakeUpstream } from './test-utils/fake-upstream.js';

const tmp = tempDir('cf-proxy-guard-');
const store = join(tmp.dir, '.contextfold');
const s = fakeSecrets('proxy');
let up: FakeUpstream;
let proxy: RunningProxy;

beforeAll(async () => {
  up = await startFakeUpstream(cannedReply());
  proxy = await startProxy({ upstream: up.url, port: 0, dir: store, budget: 1500, keepRecent: 1 });
});
afterAll(async () => {
  await proxy.close();
  await up.close();
  tmp.cleanup();
});

type Msg = { role: string; content: unknown };

/** A conversation whose tool output prints credentials, resent whole on every call. */
function history(calls: number): Msg[] {
  const out: Msg[] = [{ role: 'user', content: 'Check the deployment credentials.' }];
  const id = 'toolu_creds';
  out.push({
    role: 'assistant',
    content: [{ type: 'tool_use', id, name: 'Bash', input: { command: 'cat .env' } }],
  });
  out.push({
    role: 'user',
    content: [{ type: 'tool_result', tool_use_id: id, content: secretTurn(s) }],
  });
  for (let k = 1; k < calls; k++) {
    out.push({ role: 'assistant', content: [{ type: 'text', text: `Step ${k} done.` }] });
    out.push({ role: 'user', content: `Next step ${k}: which database port was configured?` });
  }
  return out;
}

async function call(k: number): Promise<string> {
  const res = await fetch(`${proxy.url}/v1/messages`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', 'x-contextfold-session': 'guarded' },
    body: JSON.stringify({ model: 'm', max_tokens: 8, messages: history(k + 1) }),
  });
  await res.text();
  expect(res.status).toBe(200);
  return res.headers.get('x-contextfold-session')!;
}

describe('the proxy and secrets', () => {
  it('no secret reaches the upstream or the store, and the redacted history still continues its session', async () => {
    const ids: string[] = [];
    for (let k = 0; k < 4; k++) ids.push(await call(k));
    // Every call continued the same session: the client's copy holds the secrets, the session
    // the markers, and the proxy compares them in the recorded form (no fork, no refusal).
    expect(new Set(ids)).toEqual(new Set(['guarded']));
    for (const r of up.requests) {
      expect(leakedFragments(r.body, secretFragments(s))).toEqual([]);
    }
    expect(up.requests.some((r) => r.body.toString('utf8').includes('[REDACTED:'))).toBe(true);
    for (const f of writtenFiles(store)) {
      expect(leakedFragments(f.bytes, secretFragments(s)), f.path).toEqual([]);
    }
  }, 60_000);
});
