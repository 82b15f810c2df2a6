import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { runCli } from '../../test-utils/cli.js';
import { tempDir } from '../../test-utils/shared.js';

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
  it('--json prints { mode, summary, rows } with the protocol field names', () => {
    const r = runCli(['--json', 'eval', '--questions', questions, '--trajectories', trajectories]);
    expect(r.code).toBe(0);
    const out = JSON.parse(r.stdout);
    expect(out.mode).toBe('ranked');
    expect(Object.keys(out.summary).sort()).toEqual([
      'by_kind',
      'hit_rate',
      'latest_hit_rate_evolving',
      'mean_pages',
      'mean_tokens',
      'no_page_rate',
      'questions',
      'scan_latency_ms',
      'token_precision',
    ]);
    expect(out.summary).toMatchObject({ questions: 1, hit_rate: 1, latest_hit_rate_evolving: 1 });
    expect(out.rows).toEqual([
      expect.objectContaining({ id: 'port', hit: true, latest_hit: true, paged_steps: [1] }),
    ]);
  });

  it('--compare measures both modes; --retrieval picks one', () => {
    const both = JSON.parse(
      runCli([
        '--json',
        'eval',
        '--questions',
        questions,
        '--trajectories',
        trajectories,
        '--compare',
      ]).stdout,
    );
    expect(both.results.map((x: { mode: string }) => x.mode)).toEqual(['reference', 'ranked']);
    const ref = runCli([
      '--retrieval',
      'reference',
      'eval',
      '--questions',
      questions,
      '--trajectories',
      trajectories,
    ]);
    expect(ref.code).toBe(0);
    expect(ref.stdout).toContain('retrieval reference: 1 questions');
    expect(ref.stdout).toContain('hit_rate                  100.0%');
  });

  it('bad input: one line, non-zero exit, no stack trace', () => {
    const missing = runCli([
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
    const noArgs = runCli(['eval']);
    expect(noArgs.code).not.toBe(0);
    expect(noArgs.stderr).toContain('--questions');
  });
});
