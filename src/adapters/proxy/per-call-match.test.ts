import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import type { HistoryRecord } from '../../harness/messages.js';
import { readEvents } from '../../harness/session-events.js';
import { readHistoryRecords } from '../../import/turns-jsonl.js';
import { runCliProcess } from '../../test-utils/cli.js';
import { HAS_SHARED, sharedPath } from '../../test-utils/shared.js';
import { tempDir } from '../../test-utils/temp-dir.js';
import type { ProxyLogLine } from './call-log.js';
import { anthropicRequests, openAiRequests } from './recorded-requests.js';
import { startProxy } from './server.js';
import { sessionStoreDir } from './session-pool.js';
import { cannedReply, startFakeUpstream } from './test-utils/fake-upstream.js';

const RUN = HAS_SHARED || process.env.CI === 'true';
const tmp = tempDir('cf-proxy-match-');
afterAll(() => tmp.cleanup());

const DECISIONS = [
  'turn',
  'step_id',
  'history_messages',
  'history_tokens',
  'pack_tokens',
  'baseline_tokens',
  'live_tokens',
  'budget',
  'folded',
  'paged_in',
  'excerpted',
  'evicted',
  'warnings',
] as const;

const decisions = (r: Record<string, unknown>) => DECISIONS.map((k) => r[k]);

describe.skipIf(!RUN)(
  'the proxy and `contextfold session --per-call` make the same decisions',
  () => {
    for (const api of ['anthropic', 'openai'] as const) {
      it(`${api}: call for call, on a real session`, async () => {
        const records = readHistoryRecords(
          sharedPath('data', 'trajectories', 'marot_spotter_6c2214d7_subagent_agent-afc096d.jsonl'),
        );
        const up = await startFakeUpstream(cannedReply());
        const logs: ProxyLogLine[] = [];
        const dir = join(tmp.dir, api, '.contextfold');
        const proxy = await startProxy({
          upstream: up.url,
          port: 0,
          dir,
          budget: 6000,
          keepRecent: 4,
          onLog: (l) => logs.push(l),
        });
        const calls =
          api === 'anthropic'
            ? anthropicRequests(records, { model: 'm', max_tokens: 8 })
            : openAiRequests(records, { model: 'm' });
        for (const c of calls) {
          const res = await fetch(
            `${proxy.url}/v1/${api === 'anthropic' ? 'messages' : 'chat/completions'}`,
            {
              method: 'POST',
              headers: { 'content-type': 'application/json', 'x-contextfold-session': 'match' },
              body: JSON.stringify(c.body),
            },
          );
          expect(res.status).toBe(200);
          await res.text();
        }
        await proxy.close();
        await up.close();

        // The history the proxy recorded (times included), as a turns file, replayed per call.
        const history: HistoryRecord[] = [];
        for (const e of readEvents(sessionStoreDir(dir, 'match'))) {
          if (e.type === 'append') history.push(...e.messages);
        }
        history.push({ step_id: history.length, role: 'assistant', content: 'done' });
        const file = join(tmp.dir, `${api}.jsonl`);
        writeFileSync(file, history.map((r) => JSON.stringify(r)).join('\n'));
        const r = runCliProcess([
          '--dir',
          join(tmp.dir, `${api}-replay`, '.contextfold'),
          '--json',
          'session',
          file,
          '--per-call',
          '--budget',
          '6000',
          '--keep-recent',
          '4',
        ]);
        expect(r.code).toBe(0);
        const rows = r.stdout
          .trim()
          .split('\n')
          .map((l) => JSON.parse(l) as Record<string, unknown>);
        rows.pop();
        const proxied = logs.filter((l) => l.kind === 'call');
        expect(proxied).toHaveLength(calls.length);
        expect(rows.map(decisions)).toEqual(proxied.map((l) => decisions(l as never)));
        expect(proxied.some((l) => l.kind === 'call' && l.folded.length > 0)).toBe(true);
        expect(proxied.some((l) => l.kind === 'call' && l.paged_in.length > 0)).toBe(true);
      }, 120_000);
    }
  },
);
