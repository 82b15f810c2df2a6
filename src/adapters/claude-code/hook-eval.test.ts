import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { parseClaudeCodeTranscript } from '../../import/claude-code-transcript.js';
import { isUsageError } from '../../protocol/errors.js';
import { TranscriptWriter } from '../../test-utils/claude-transcript.js';
import { HAS_SHARED, sharedPath } from '../../test-utils/shared.js';
import { tempDir } from '../../test-utils/temp-dir.js';
import { MAX_CONTEXT_BYTES } from './archived-context.js';
import {
  compactionLines,
  type HookProbe,
  loadHookProbes,
  runHookEval,
  transcriptLines,
} from './hook-eval.js';

const tmp = tempDir();
afterAll(() => tmp.cleanup());

const PROBES = new URL('../../../eval/hook-probes.json', import.meta.url).pathname;

/** A session whose archived turn holds a test count that nothing after the compaction repeats. */
function writeSession(): string {
  const w = new TranscriptWriter('eval-session');
  w.user('Run the widget tests');
  w.assistant('', [
    {
      name: 'Bash',
      input: { command: 'mix test test/widget_test.exs' },
      result: 'Running ExUnit with seed: 4242\n17 tests, 0 failures',
    },
  ]);
  w.assistant('The widget tests pass.');
  w.compact('Summary: widget work done, tests green.');
  w.user('Now style the dashboard');
  w.assistant('Styling the dashboard.');
  const file = join(tmp.dir, 'session.jsonl');
  writeFileSync(file, w.text());
  return file;
}

function writeProbes(probes: Partial<HookProbe>[]): string {
  const file = join(tmp.dir, `probes-${Math.random().toString(36).slice(2)}.json`);
  writeFileSync(file, JSON.stringify({ version: 1, probes }));
  return file;
}

describe('runHookEval', () => {
  it('replays a transcript through runHook and scores additionalContext', async () => {
    const transcript = writeSession();
    const n = transcriptLines(transcript).length;
    const probe: HookProbe = {
      id: 'widget-count',
      transcript: 'session.jsonl',
      after_line: n,
      prompt: 'How many widget tests were there when they ran?',
      answer: '17 tests, 0 failures',
      source_step: 1,
    };
    const missing: HookProbe = { ...probe, id: 'absent', answer: 'never said' };
    const r = await runHookEval({ probes: [probe, missing], transcriptsDir: tmp.dir });
    expect(r.rows.map((x) => [x.id, x.hit])).toEqual([
      ['widget-count', true],
      ['absent', false],
    ]);
    expect(r.rows[0]!.archived_before).toBeGreaterThan(0);
    expect(r.rows[0]!.pages).toContain(1);
    expect(r.summary).toMatchObject({ probes: 2, hit_rate: 0.5 });
    expect(r.summary.max_bytes).toBeLessThanOrEqual(MAX_CONTEXT_BYTES);
    const ref = await runHookEval({
      probes: [probe],
      transcriptsDir: tmp.dir,
      retrieval: 'reference',
    });
    expect(ref.mode).toBe('reference');
  });

  it('bad probe files: one clear error each', () => {
    const transcript = writeSession();
    const n = transcriptLines(transcript).length;
    const boundary = compactionLines(transcriptLines(transcript))[0]!;
    const good = {
      id: 'a',
      transcript: 'session.jsonl',
      after_line: n,
      prompt: 'p',
      answer: 'x',
      source_step: 1,
    };
    const cases: [Partial<HookProbe>[], RegExp][] = [
      [[good, good], /duplicate id 'a'/],
      [[{ ...good, after_line: boundary }], /before the first compaction/],
      [[{ ...good, after_line: n + 1 }], /past the end of session\.jsonl/],
      [[{ ...good, transcript: 'nope.jsonl' }], /cannot read transcript .*nope\.jsonl/],
      [[{ ...good, answer: '' }], /probes\.0\.answer/],
    ];
    for (const [probes, message] of cases) {
      try {
        loadHookProbes(writeProbes(probes), tmp.dir);
        expect.unreachable();
      } catch (e) {
        expect(isUsageError(e)).toBe(true);
        expect((e as Error).message).toMatch(message);
      }
    }
    expect(loadHookProbes(writeProbes([good]), tmp.dir)).toHaveLength(1);
  });
});

describe.skipIf(!HAS_SHARED)('eval/hook-probes.json over the public spotter transcripts', () => {
  const dir = sharedPath('data', 'raw', 'claude-code');

  it('validates, and holds at least 10 probes over transcripts with a compaction', () => {
    const probes = loadHookProbes(PROBES, dir);
    expect(probes.length).toBeGreaterThanOrEqual(10);
    // Only questions, answers and references: no field carries transcript text beyond them.
    const raw = JSON.parse(readFileSync(PROBES, 'utf8')) as { probes: object[] };
    for (const p of raw.probes) {
      expect(Object.keys(p).sort()).toEqual(
        ['after_line', 'answer', 'id', 'prompt', 'source_step', 'transcript'].sort(),
      );
    }
  });

  it('every answer is archived: in its source turn before the compaction, and absent from the compaction summary and every later turn', () => {
    const probes = loadHookProbes(PROBES, dir);
    const byTranscript = new Map<string, HookProbe[]>();
    for (const p of probes)
      byTranscript.set(p.transcript, [...(byTranscript.get(p.transcript) ?? []), p]);
    for (const [name, ps] of byTranscript) {
      const lines = transcriptLines(join(dir, name));
      for (const p of ps) {
        // The transcript as it is when the prompt is submitted, parsed as the hook parses it.
        const parsed = parseClaudeCodeTranscript(
          `${lines.slice(0, p.after_line).join('\n')}\n`,
          name,
        );
        const summaryStep = parsed.compactions.at(-1)!;
        expect(summaryStep, p.id).toBeGreaterThan(0);
        expect(p.source_step, p.id).toBeLessThan(summaryStep);
        expect(parsed.turns[p.source_step]!.content, p.id).toContain(p.answer);
        const live = parsed.turns.filter((t) => t.step_id >= summaryStep);
        expect(live[0]!.content, p.id).toMatch(/compact summary|continued from a previous/i);
        for (const t of live)
          expect(t.content.includes(p.answer), `${p.id} @${t.step_id}`).toBe(false);
      }
    }
  });
});
