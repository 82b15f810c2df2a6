import { readdirSync, readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { HAS_SHARED, sharedPath } from '../test-utils/shared.js';
import { Redactor } from './redactor.js';

const lines = (path: string): Record<string, unknown>[] =>
  readFileSync(path, 'utf8')
    .split('\n')
    .filter((l) => l.trim() !== '')
    .map((l) => JSON.parse(l));

describe.skipIf(!HAS_SHARED)('the guard on ../shared data', () => {
  const redactor = new Redactor();

  it('finds no secret in the interop vector histories, so default folds reproduce the reference hashes', async () => {
    for (const file of ['demo_history.jsonl', 'synth200.jsonl']) {
      for (const t of lines(sharedPath('vectors', file))) {
        for (const v of [t.summary, t.raw_content]) {
          if (typeof v !== 'string') continue;
          expect((await redactor.redactText(v)).redactions, `${file} step ${t.step_id}`).toEqual(
            [],
          );
        }
      }
    }
  });

  it('finds no secret in the shared trajectories (already redacted upstream): the measured false-positive count is 0', async () => {
    const dir = sharedPath('data', 'trajectories');
    let turns = 0;
    for (const f of readdirSync(dir)) {
      for (const t of lines(`${dir}/${f}`)) {
        turns++;
        const r = await redactor.redactText(String(t.content));
        expect(
          r.redactions.map((x) => x.pattern_id),
          `${f} step ${t.step_id}`,
        ).toEqual([]);
      }
    }
    expect(turns).toBeGreaterThan(1000);
  });
});
