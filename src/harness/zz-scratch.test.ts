import { readFileSync } from 'node:fs';
import { test } from 'vitest';
import { describeTurn } from './summarize.js';
test('scratch', () => {
  const dir = '/work/shared/data/trajectories/';
  for (const f of ['marot_spotter_4d5611e5-241a-462a-8d15-5122611a9569.jsonl','palimondo_BookMinder_day-003.jsonl','SWE-agent_ctf_web_i_got_id_demo.jsonl','AFI-Protocol_afi-core_aider_history.jsonl']) {
    const lines = readFileSync(dir + f, 'utf8').trim().split('\n').map((l) => JSON.parse(l));
    for (const l of lines.slice(0, 14)) {
      const d = describeTurn(l);
      console.log(l.step_id, d.status, d.action_type, JSON.stringify(d.summary));
    }
  }
});
