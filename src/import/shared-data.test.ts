import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { expect, it } from 'vitest';
import { ContextFold } from '../engine/context-fold.js';
import { describeShared, HAS_SHARED, sharedPath } from '../test-utils/shared.js';
import { tempDir } from '../test-utils/temp-dir.js';
import { parseClaudeCodeTranscript, TranscriptReader } from './claude-code-transcript.js';
import { detectImportFormat } from './detect-format.js';
import { importFile } from './import-file.js';
import { parseHistory } from './parse-history.js';
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
const raw = (suffix: string) => files('raw').filter((f) => f.endsWith(suffix));
const cases: [ImportFormat, string][] = [
  ...files('trajectories').map((f): [ImportFormat, string] => ['turns', f]),
  ...files('raw/claude-code').map((f): [ImportFormat, string] => ['claude-code', f]),
  ...files('raw/cline').map((f): [ImportFormat, string] => ['anthropic', f]),
  ...raw('.aider.chat.history.md').map((f): [ImportFormat, string] => ['aider', f]),
  ...raw('.traj').map((f): [ImportFormat, string] => ['swe-agent', f]),
];

/** The data set's own conversion of a raw session (one turn per message, in `trajectories/`). */
const converted = (name: string): ImportedTurn[] =>
  readFileSync(join(data, 'trajectories', name), 'utf8')
    .split('\n')
    .filter((l) => l.trim() !== '')
    .map((l) => JSON.parse(l) as ImportedTurn);

describeShared('import of the real sessions in ../shared/data', () => {
  it('covers every trajectory and every raw session: Claude Code, Cline, aider, SWE-agent', () => {
    expect(cases.filter(([f]) => f === 'turns').length).toBeGreaterThanOrEqual(6);
    expect(cases.filter(([, p]) => p.endsWith('.jsonl.gz')).length).toBe(2);
    for (const f of ['anthropic', 'aider', 'swe-agent'] as const) {
      expect(cases.some(([g]) => g === f)).toBe(true);
    }
  });

  it('detects the format of every raw session', () => {
    for (const [format, file] of cases.filter(([f]) => f !== 'turns' && f !== 'anthropic')) {
      expect(detectImportFormat({ text: readSourceText(file), source: file }), file).toBe(format);
    }
  });

  it('reads the aider history as the data set converted it: the same turns, byte for byte', () => {
    const [, file] = cases.find(([f]) => f === 'aider')!;
    const turns = parseHistory({ text: readSourceText(file), format: 'aider', source: file }).turns;
    expect(turns).toEqual(converted('AFI-Protocol_afi-core_aider_history.jsonl'));
  });

  it('reads the SWE-agent trajectory with every message of the conversion, each action with its observation', () => {
    const [, file] = cases.find(([f]) => f === 'swe-agent')!;
    const turns = parseHistory({
      text: readSourceText(file),
      format: 'swe-agent',
      source: file,
    }).turns;
    const messages = converted('SWE-agent_ctf_web_i_got_id_demo.jsonl');
    // System prompt, task, then one turn per action, with its observation when it has one.
    expect(turns.length).toBe(2 + messages.filter((m) => m.role === 'assistant').length);
    const all = turns.map((t) => t.content).join('\n');
    for (const m of messages) {
      const body = m.content.replace(/^\[system\]\n/, '');
      // An assistant message is its reasoning and its action (kept apart, not as one text).
      const pieces = m.role === 'assistant' ? body.split('\n```\n') : [body];
      for (const piece of pieces)
        expect(all, `step ${m.step_id}`).toContain(piece.replace(/```\n?$/, '').trim());
    }
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
