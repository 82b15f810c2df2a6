import { existsSync, readdirSync } from 'node:fs';
import { join } from 'node:path';
import { expect, it } from 'vitest';
import { ContextFold } from '../engine/context-fold.js';
import { describeShared, HAS_SHARED, sharedPath } from '../test-utils/shared.js';
import { tempDir } from '../test-utils/temp-dir.js';
import { parseClaudeCodeTranscript, TranscriptReader } from './claude-code-transcript.js';
import { importFile } from './import-file.js';
import { readSourceText } from './read-source.js';
import type { ImportedTurn, ImportFormat } from './turn.js';

// Real third-party sessions (read in place, never copied into the project).
const data = sharedPath('data');
const present = HAS_SHARED && existsSync(data);

const files = (sub: string) =>
  present
    ? readdirSync(join(data, sub))
        .sort()
        .map((f) => join(data, sub, f))
    : [];
const cases: [ImportFormat, string][] = [
  ...files('trajectories').map((f): [ImportFormat, string] => ['turns', f]),
  ...files('raw/claude-code').map((f): [ImportFormat, string] => ['claude-code', f]),
];

describeShared('import of the real sessions in ../shared/data', () => {
  it('covers every trajectory and both gzipped Claude Code transcripts', () => {
    expect(cases.filter(([f]) => f === 'turns').length).toBeGreaterThanOrEqual(6);
    expect(cases.filter(([, p]) => p.endsWith('.jsonl.gz')).length).toBe(2);
  });

  it.each(cases)('%s %s imports and the store validates', async (format, file) => {
    const dir = join(tempDir().dir, '.contextfold');
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

  it.each(cases.filter(([f]) => f === 'claude-code'))(
    '%s %s: reading it in chunks through persisted state gives the same turns',
    (_format, file) => {
      const text = readSourceText(file);
      const whole = parseClaudeCodeTranscript(text, file);
      let reader = new TranscriptReader();
      const got: ImportedTurn[] = [];
      text.split('\n').forEach((line, i) => {
        got.push(...reader.pushLine(line, i + 1, file));
        if (i % 97 === 0) reader = new TranscriptReader(JSON.parse(JSON.stringify(reader.state())));
      });
      got.push(...reader.flush());
      expect(got.sort((a, b) => a.step_id - b.step_id)).toEqual(whole.turns);
    },
  );
});
