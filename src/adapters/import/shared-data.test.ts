import { existsSync, readdirSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { describe, expect, it } from 'vitest';
import { ContextFold } from '../../engine/context-fold.js';
import { tempDir } from '../test-utils/temp-dir.js';
import { importFile } from './import-file.js';
import type { ImportFormat } from './turn.js';

// Real third-party sessions (read in place, never copied into the project).
const data = resolve(new URL('../../../', import.meta.url).pathname, '../shared/data');
const present = existsSync(data);
if (!present) {
  console.warn(`[contextfold] skipping the real-data import acceptance test: ${data} is absent`);
}

const files = (sub: string) => (present ? readdirSync(join(data, sub)).sort().map((f) => join(data, sub, f)) : []);
const cases: [ImportFormat, string][] = [
  ...files('trajectories').map((f): [ImportFormat, string] => ['turns', f]),
  ...files('raw/claude-code').map((f): [ImportFormat, string] => ['claude-code', f]),
];

describe.skipIf(!present)('import of the real sessions in ../shared/data', () => {
  it('covers every trajectory and both gzipped Claude Code transcripts', () => {
    expect(cases.filter(([f]) => f === 'turns').length).toBeGreaterThanOrEqual(6);
    expect(cases.filter(([, p]) => p.endsWith('.jsonl.gz')).length).toBe(2);
  });

  it.each(cases)('%s %s imports and the store validates', async (format, file) => {
    const dir = join(tempDir(), '.contextfold');
    const cf = await ContextFold.open({ dir });
    const r = await importFile(cf, { file, format });
    expect(r.turns).toBeGreaterThan(0);
    expect(r.folded).toBe(r.turns);
    const steps = r.history.turns.map((t) => t.step_id);
    if (format === 'claude-code') expect(steps).toEqual(steps.map((_, i) => i));
    const v = await cf.validate();
    expect(v.problems).toEqual([]);
    expect(v.ok).toBe(true);
    expect((await cf.status()).nodes).toBe(r.turns);
    await cf.close();
  });
});
