import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { isUsageError } from '../protocol/errors.js';
import { tempDir } from '../test-utils/temp-dir.js';
import { loadQuestions, loadTrajectory } from './load.js';
import { runEval } from './run-eval.js';
import type { EvalQuestion } from './types.js';

const tmp = tempDir();
afterAll(() => tmp.cleanup());

// A hand-made session. o200k token counts, checked once by hand with gpt-tokenizer:
// step 1: 10, step 2: 8, step 3: 4, step 4: 8.
const TURNS = [
  { step_id: 0, role: 'user', content: 'Set up the database.' },
  { step_id: 1, role: 'assistant', content: 'Configuring postgresql on port 5433.' },
  { step_id: 2, role: 'tool', content: 'postgresql listening on port 5433' },
  { step_id: 3, role: 'tool', content: 'migration billing_table applied' },
  { step_id: 4, role: 'tool', content: 'postgresql listening on port 5434' },
  { step_id: 5, role: 'user', content: 'thanks' },
];
const trajDir = join(tmp.dir, 'trajectories');
mkdirSync(trajDir, { recursive: true });
writeFileSync(join(trajDir, 'tiny.jsonl'), `${TURNS.map((t) => JSON.stringify(t)).join('\n')}\n`);

const q = (over: Partial<EvalQuestion> & Pick<EvalQuestion, 'id'>): EvalQuestion => ({
  trajectory: 'tiny',
  asked_after_step: 5,
  question: '',
  gold_steps: [0],
  latest_step: 0,
  answer: '',
  kind: 'paraphrase',
  ...over,
});

// The reference scan (CONF-13 RGSC over identifiers), worked by hand for each question:
const QUESTIONS: EvalQuestion[] = [
  // terms {listening, port, postgresql}: step 4 and step 2 cover all three; the tie goes to
  // the larger step → page [4] (8 tokens, gold), answer in the latest step.
  q({
    id: 'evolving-now',
    kind: 'evolving-value',
    question: 'Which port is postgresql listening on?',
    gold_steps: [4],
    latest_step: 4,
    answer: 'port 5434',
  }),
  // terms {migration, applied}: only step 3 → page [3] (4 tokens, gold).
  q({
    id: 'migration',
    kind: 'exact-identifier',
    question: 'Which migration was applied?',
    gold_steps: [3],
    latest_step: 3,
    answer: 'billing_table',
  }),
  // no identifier of three or more letters survives the stopwords → no page, a miss.
  q({ id: 'vague', question: 'What did the DB do?', gold_steps: [0], answer: 'database' }),
  // asked after step 2 (steps 3..5 not folded yet): steps 2 and 1 cover {port, postgresql},
  // step 2 also {listening} → page [2] (8 tokens, gold, latest).
  q({
    id: 'evolving-then',
    kind: 'evolving-value',
    asked_after_step: 2,
    question: 'Which port is postgresql listening on?',
    gold_steps: [2],
    latest_step: 2,
    answer: 'port 5433',
  }),
  // terms {billing_table, applied, port, 5433}: steps 3, 2, 1 each cover two, the tie goes to
  // step 3; the residual {port, 5433} then goes to step 2 (over step 1) → pages [3, 2]:
  // 4 + 8 tokens, 4 of them gold.
  q({
    id: 'two-intents',
    kind: 'number-lookup',
    question: 'Was billing_table applied on port 5433?',
    gold_steps: [3],
    latest_step: 3,
    answer: 'billing_table applied',
  }),
];

describe('runEval (reference mode, hand-computed)', () => {
  it('scores a tiny session exactly as worked out by hand', async () => {
    const r = await runEval({
      questions: QUESTIONS,
      trajectoriesDir: trajDir,
      mode: 'reference',
      summarize: (t) => t.role,
      workDir: tmp.dir,
    });
    expect(r.mode).toBe('reference');
    const rows = r.rows.map(({ scan_ms: _ms, family, ...rest }) => {
      expect(family).toBe('other'); // no manifest beside these trajectories
      return rest;
    });
    expect(rows).toEqual([
      {
        id: 'evolving-now',
        trajectory: 'tiny',
        kind: 'evolving-value',
        hit: true,
        latest_hit: true,
        pages: 1,
        tokens: 8,
        gold_tokens: 8,
        paged_steps: [4],
      },
      {
        id: 'migration',
        trajectory: 'tiny',
        kind: 'exact-identifier',
        hit: true,
        latest_hit: true,
        pages: 1,
        tokens: 4,
        gold_tokens: 4,
        paged_steps: [3],
      },
      {
        id: 'vague',
        trajectory: 'tiny',
        kind: 'paraphrase',
        hit: false,
        latest_hit: false,
        pages: 0,
        tokens: 0,
        gold_tokens: 0,
        paged_steps: [],
      },
      {
        id: 'evolving-then',
        trajectory: 'tiny',
        kind: 'evolving-value',
        hit: true,
        latest_hit: true,
        pages: 1,
        tokens: 8,
        gold_tokens: 8,
        paged_steps: [2],
      },
      {
        id: 'two-intents',
        trajectory: 'tiny',
        kind: 'number-lookup',
        hit: true,
        latest_hit: true,
        pages: 2,
        tokens: 12,
        gold_tokens: 4,
        paged_steps: [3, 2],
      },
    ]);
    const { scan_latency_ms, by_family, by_session, ...summary } = r.summary;
    expect(Object.keys(by_family)).toEqual(['other']);
    expect(by_session.tiny).toMatchObject({ questions: 5, hit_rate: 0.8 });
    expect(summary).toEqual({
      questions: 5,
      hit_rate: 0.8,
      latest_hit_rate_evolving: 1,
      mean_pages: 1,
      mean_tokens: 32 / 5,
      token_precision: 24 / 32,
      no_page_rate: 0.2,
      by_kind: {
        'evolving-value': 1,
        'exact-identifier': 1,
        'number-lookup': 1,
        paraphrase: 0,
      },
    });
    expect(scan_latency_ms.p99).toBeGreaterThanOrEqual(scan_latency_ms.p50);
  });

  it('ranked mode runs the same protocol within the per-turn budget', async () => {
    const r = await runEval({
      questions: QUESTIONS,
      trajectoriesDir: trajDir,
      mode: 'ranked',
      workDir: tmp.dir,
    });
    expect(r.mode).toBe('ranked');
    expect(r.rows.map((x) => x.id)).toEqual(QUESTIONS.map((x) => x.id));
    for (const row of r.rows) expect(row.tokens).toBeLessThanOrEqual(3500);
    // The evolving question asked at the end pages the latest value.
    expect(r.rows[0]).toMatchObject({ hit: true, latest_hit: true });
  });
});

describe('bad input', () => {
  it('a question past the end of its trajectory is a usage error', async () => {
    const bad = [{ ...QUESTIONS[0]!, asked_after_step: 99, gold_steps: [4], latest_step: 4 }];
    const err = await runEval({
      questions: bad,
      trajectoriesDir: trajDir,
      mode: 'reference',
    }).catch((e: unknown) => e);
    expect(isUsageError(err)).toBe(true);
    expect(String((err as Error).message)).toContain('past the end of trajectory tiny');
  });

  it('a gold step out of range is a usage error, before anything is measured', async () => {
    const bad = [{ ...QUESTIONS[0]!, asked_after_step: 5, gold_steps: [4, 9], latest_step: 9 }];
    await expect(
      runEval({ questions: bad, trajectoriesDir: trajDir, mode: 'reference' }),
    ).rejects.toThrow(/question evolving-now: gold step 9 is out of range for trajectory tiny/);
  });

  it('a missing trajectory file names the path', () => {
    try {
      loadTrajectory(trajDir, 'nope');
      expect.unreachable();
    } catch (e) {
      expect(isUsageError(e)).toBe(true);
      expect((e as Error).message).toContain(join(trajDir, 'nope.jsonl'));
    }
  });

  it('turns out of order are refused with the line number', () => {
    const dir = join(tmp.dir, 'disorder');
    mkdirSync(dir, { recursive: true });
    writeFileSync(join(dir, 'x.jsonl'), '{"step_id":1,"role":"user","content":"a"}\n');
    expect(() => loadTrajectory(dir, 'x')).toThrow(
      /x\.jsonl:1: "step_id" 1 is out of order: expected 0/,
    );
  });

  it('questions files are validated at the boundary', () => {
    const file = join(tmp.dir, 'q.json');
    writeFileSync(file, JSON.stringify({ questions: [{ id: 'a', trajectory: 't' }] }));
    expect(() => loadQuestions(file)).toThrow(/questions file .*q\.json: questions\.0\./);
    writeFileSync(file, '{ not json');
    expect(() => loadQuestions(file)).toThrow(/is not valid JSON/);
    writeFileSync(file, JSON.stringify([{ ...QUESTIONS[0]!, latest_step: 2 }]));
    expect(() => loadQuestions(file)).toThrow(/latest_step 2 is not a gold step/);
    for (const empty of ['[]', '{"questions": []}']) {
      writeFileSync(file, empty);
      expect(() => loadQuestions(file)).toThrow(/q\.json has no questions: nothing to measure$/);
    }
  });
});
