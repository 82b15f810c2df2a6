import { readFileSync } from 'node:fs';
import { Ajv2020 } from 'ajv/dist/2020.js';
import ajvFormats from 'ajv-formats';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { buildFoldedStep, renderFoldedStep } from './folded-step.js';
import type { HistoryMessage, Message } from './messages.js';
import { groupTurns } from './turns.js';

const schema = JSON.parse(
  readFileSync(new URL('../../schemas/folded_step.schema.json', import.meta.url), 'utf8'),
);
const ajv = new Ajv2020({ strict: true, allErrors: true });
ajvFormats.default(ajv);
const validate = ajv.compile(schema);

const ref = {
  step_id: 0,
  file_path: '.contextfold/cold_nodes/step_000004.json',
  payload_sha256: 'a'.repeat(64),
};
const turnOf = (msgs: Message[], from = 4) =>
  groupTurns(
    msgs.map(
      (m, i) => ({ ...m, stepId: from + i, timestamp: '2025-03-01T10:00:00Z' }) as HistoryMessage,
    ),
    'positions',
  )[0]!;

describe('folded-step records', () => {
  it('validate against schemas/folded_step.schema.json (ajv, draft 2020-12, formats)', () => {
    const turn = turnOf([
      {
        role: 'assistant',
        content: 'Edit the pool',
        toolCalls: [{ id: 'c', name: 'edit_file', input: { path: 'src/db/pool.ts' } }],
      },
      { role: 'tool', toolCallId: 'c', content: 'ok', exitCode: 0 },
    ]);
    const r = buildFoldedStep(turn, 'assistant edited src/db/pool.ts', ref, 'positions');
    expect(validate(r)).toBe(true);
    expect(r).toEqual({
      step_id: 4,
      timestamp: '2025-03-01T10:00:00Z',
      summary: 'assistant edited src/db/pool.ts',
      status: 'SUCCESS',
      action_type: 'CODE_MODIFICATION',
      artifacts: { cold_node_ref: ref.file_path, last_step_id: 5 },
      target_files: ['src/db/pool.ts'],
    });
    // Under the `turns` rule a step id numbers a turn, never a message: no `last_step_id`.
    const [first, second] = groupTurns(
      [{ role: 'user', content: 'edit it' } as Message, ...turn.messages].map(
        (m, i) => ({ ...m, stepId: i, timestamp: '2025-03-01T10:00:00Z' }) as HistoryMessage,
      ),
    );
    expect(first!.stepId).toBe(0);
    const t = buildFoldedStep(second!, 'assistant edited src/db/pool.ts', ref);
    expect(validate(t)).toBe(true);
    expect(t.step_id).toBe(1);
    expect(t.artifacts).toEqual({ cold_node_ref: ref.file_path });
  });

  it('validate for any turn content and any summary (cut to 280 code points)', () => {
    fc.assert(
      fc.property(
        fc.string({ unit: 'grapheme', maxLength: 600 }),
        fc.string({ unit: 'binary', maxLength: 600 }),
        (content, summary) => {
          const r = buildFoldedStep(turnOf([{ role: 'user', content }]), summary, ref);
          if (!validate(r)) throw new Error(JSON.stringify(validate.errors));
          expect(Array.from(r.summary).length).toBeLessThanOrEqual(280);
          expect(() => renderFoldedStep(r)).not.toThrow();
        },
      ),
      { numRuns: 200 },
    );
  });

  it('bound every field: 12 target_files of 160 code points, the rest counted, ns timestamps', () => {
    const files = Array.from({ length: 20 }, (_, i) => `src/${'deep/'.repeat(400)}file${i}.ts`);
    const msgs = [{ role: 'assistant' as const, content: `Edited ${files.join(' ')}` }];
    const turn = groupTurns([
      { ...msgs[0]!, stepId: 4, timestamp: `2025-03-01T10:00:00.${'1'.repeat(5000)}Z` },
    ] as HistoryMessage[])[0]!;
    const r = buildFoldedStep(turn, 'edited twenty files', ref);
    if (!validate(r)) throw new Error(JSON.stringify(validate.errors));
    expect(r.target_files).toHaveLength(12);
    expect(r.target_files_omitted).toBe(8);
    for (const f of r.target_files!) {
      expect(Array.from(f).length).toBeLessThanOrEqual(160);
      expect(f.startsWith('…')).toBe(true);
      expect(f).toMatch(/\/file\d+\.ts$/);
    }
    expect(r.timestamp).toBe('2025-03-01T10:00:00.111111111Z');
    expect(renderFoldedStep(r).length).toBeLessThan(2600);
    // The same turn again gives the same record (the cut is deterministic).
    expect(renderFoldedStep(buildFoldedStep(turn, 'edited twenty files', ref))).toBe(
      renderFoldedStep(r),
    );
    // The rule of sessions recorded before it: twelve whole paths, no count.
    const legacy = buildFoldedStep(turn, 'edited twenty files', ref, 'turns', false);
    expect(legacy.target_files).toHaveLength(12);
    for (const f of legacy.target_files!) expect(f.length).toBeGreaterThan(2000);
    expect(legacy.target_files_omitted).toBeUndefined();
    expect(legacy.timestamp).toBe(turn.messages[0]!.timestamp);
  });

  it('the schema rejects what the spec forbids', () => {
    const ok = buildFoldedStep(turnOf([{ role: 'user', content: 'hi' }]), 'hi', ref);
    const bad = [
      { ...ok, summary: 'x'.repeat(281) },
      { ...ok, status: 'DONE' },
      { ...ok, action_type: 'DEPLOY' },
      { ...ok, timestamp: 'last tuesday' },
      { ...ok, step_id: 1.5 },
      { ...ok, artifacts: {} },
      (({ artifacts: _a, ...rest }) => rest)(ok),
    ];
    for (const b of bad) expect(validate(b)).toBe(false);
  });

  it('render as one canonical JSON line, the same bytes every time', () => {
    const r = buildFoldedStep(turnOf([{ role: 'user', content: 'hi' }]), 'hi', ref);
    const line = renderFoldedStep(r);
    expect(line).not.toContain('\n');
    expect(line.startsWith('{"action_type":"OTHER","artifacts":{"cold_node_ref":')).toBe(true);
    expect(renderFoldedStep(JSON.parse(line))).toBe(line);
  });
});
