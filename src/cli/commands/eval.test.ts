import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { runCliProcess } from '../../test-utils/cli.js';
import { tempDir } from '../../test-utils/temp-dir.js';

const tmp = tempDir();
afterAll(() => tmp.cleanup());

const trajectories = join(tmp.dir, 'trajectories');
mkdirSync(trajectories, { recursive: true });
writeFileSync(
  join(trajectories, 'tiny.jsonl'),
  [
    { step_id: 0, role: 'user', content: 'Set up the database.' },
    { step_id: 1, role: 'tool', content: 'postgresql listening on port 5433' },
    { step_id: 2, role: 'user', content: 'thanks' },
  ]
    .map((t) => JSON.stringify(t))
    .join('\n'),
);
const questions = join(tmp.dir, 'questions.json');
writeFileSync(
  questions,
  JSON.stringify({
    version: 1,
    questions: [
      {
        id: 'port',
        trajectory: 'tiny',
        asked_after_step: 2,
        question: 'Which port is postgresql listening on?',
        gold_steps: [1],
        latest_step: 1,
        answer: 'port 5433',
        kind: 'evolving-value',
      },
    ],
  }),
);

describe('contextfold eval', () => {
  it('--json prints the sets, each with ranked and the BM25 chunk baseline', () => {
    const r = runCliProcess([
      '--json',
      'eval',
      '--questions',
      questions,
      '--trajectories',
      trajectories,
    ]);
    expect(r.code).toBe(0);
    const out = JSON.parse(r.stdout);
    expect(out.sets).toHaveLength(1);
    const set = out.sets[0];
    expect(set.questions).toBe(questions);
    expect(set.results.map((x: { mode: string }) => x.mode)).toEqual(['ranked', 'bm25-chunks']);
    const ranked = set.results[0];
    expect(Object.keys(ranked.summary).sort()).toEqual([
      'by_family',
      'by_kind',
      'by_session',
      'hit_rate',
      'latest_hit_rate_evolving',
      'mean_pages',
      'mean_tokens',
      'no_page_rate',
      'questions',
      'scan_latency_ms',
      'token_precision',
    ]);
    expect(ranked.summary).toMatchObject({
      questions: 1,
      hit_rate: 1,
      latest_hit_rate_evolving: 1,
    });
    expect(ranked.rows).toEqual([
      expect.objectContaining({ id: 'port', hit: true, latest_hit: true, paged_steps: [1] }),
    ]);
    expect(set.results[1].summary.hit_rate).toBe(1);
    // One set: its measured mode's summary also at the top level, for scripts.
    expect(out.summary).toEqual(ranked.summary);
  });

  it('--compare measures both modes, --no-baseline drops the baseline; text is aggregates only', () => {
    const both = JSON.parse(
      runCliProcess([
        '--json',
        'eval',
        '--questions',
        questions,
        '--trajectories',
        trajectories,
        '--compare',
        '--no-baseline',
      ]).stdout,
    );
    expect(both.sets[0].results.map((x: { mode: string }) => x.mode)).toEqual([
      'ranked',
      'reference',
    ]);
    const ref = runCliProcess([
      '--retrieval',
      'reference',
      'eval',
      '--questions',
      questions,
      '--trajectories',
      trajectories,
    ]);
    expect(ref.code).toBe(0);
    expect(ref.stdout).toContain(`${questions} (1 questions)`);
    expect(ref.stdout).toMatch(/hit_rate\s+100\.0%\s+100\.0%/);
    expect(ref.stdout).toMatch(/reference\s+bm25-chunks/);
    expect(ref.stdout).toContain('by family (hit / latest / precision)');
    expect(ref.stdout).not.toContain('Which port'); // never a question
  });

  it('bad input: one line, non-zero exit, no stack trace', () => {
    const missing = runCliProcess([
      'eval',
      '--questions',
      join(tmp.dir, 'nope.json'),
      '--trajectories',
      trajectories,
    ]);
    expect(missing.code).toBe(1);
    expect(missing.stderr.trim().split('\n')).toHaveLength(1);
    expect(missing.stderr).toContain('cannot read questions file');
    expect(missing.stderr).not.toContain('    at ');
    const noArgs = runCliProcess(['eval']);
    expect(noArgs.code).toBe(1);
    expect(noArgs.stderr).toContain('--questions');
    const noTraj = runCliProcess(['eval', '--questions', questions]);
    expect(noTraj.code).toBe(1);
    expect(noTraj.stderr).toContain('--trajectories');
    // A gold step past the end of its trajectory: refused before anything is measured.
    const bad = join(tmp.dir, 'bad.json');
    const q = JSON.parse(readFileSync(questions, 'utf8'));
    q.questions[0].gold_steps = [1, 7];
    q.questions[0].latest_step = 7;
    q.questions[0].asked_after_step = 2;
    writeFileSync(bad, JSON.stringify(q));
    const range = runCliProcess([
      '--json',
      'eval',
      '--questions',
      bad,
      '--trajectories',
      trajectories,
    ]);
    expect(range.code).toBe(1);
    expect(JSON.parse(range.stdout).message).toMatch(/gold step|after asked_after_step/);
    const missingTraj = join(tmp.dir, 'missing-traj.json');
    q.questions[0] = { ...q.questions[0], trajectory: 'absent', gold_steps: [1], latest_step: 1 };
    writeFileSync(missingTraj, JSON.stringify(q));
    const mt = runCliProcess(['eval', '--questions', missingTraj, '--trajectories', trajectories]);
    expect(mt.code).toBe(1);
    expect(mt.stderr).toContain('cannot read trajectory');
    expect(mt.stderr.trim().split('\n')).toHaveLength(1);
  });
});
