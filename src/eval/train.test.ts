import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { FEATURE_NAMES } from '../retrieval/linear-scorer.js';
import { tempDir } from '../test-utils/temp-dir.js';
import { runAblations } from './ablations.js';
import { fitRanked, leaveOneSessionOut } from './loso.js';
import { collectTraining, trainWeights } from './train.js';
import type { EvalQuestion } from './types.js';

const tmp = tempDir();
afterAll(() => tmp.cleanup());
const dir = join(tmp.dir, 'trajectories');
mkdirSync(dir, { recursive: true });

/** Two small sessions in which the answer is always in a tool result after its call. */
function session(name: string, topic: string): EvalQuestion[] {
  const turns: { step_id: number; role: string; content: string }[] = [];
  const add = (role: string, content: string) =>
    turns.push({ step_id: turns.length, role, content });
  const questions: EvalQuestion[] = [];
  for (let i = 0; i < 12; i++) {
    add('assistant', `I will now run the ${topic}${i} check for module m${i}.`);
    add('tool', `$ check ${topic}${i}\nresult ${topic}${i}: ${100 + i} items, exit 0`);
    add('assistant', `The ${topic}${i} check is done.`);
  }
  for (let i = 0; i < 25; i++) add('user', `unrelated chatter number ${i} about lunch`);
  for (let i = 0; i < 6; i++) {
    questions.push({
      id: `${name}-q${i}`,
      trajectory: name,
      asked_after_step: turns.length - 1,
      question: `How many items did the ${topic}${i} check report?`,
      gold_steps: [3 * i + 1],
      latest_step: 3 * i + 1,
      answer: `${100 + i} items`,
      kind: 'number-lookup',
    });
  }
  writeFileSync(join(dir, `${name}.jsonl`), turns.map((t) => JSON.stringify(t)).join('\n'));
  return questions;
}

const questions = [...session('one', 'lint'), ...session('two', 'audit')];

describe('training the ranked scorer', () => {
  it('labels the scan’s own candidates by the gold steps', () => {
    const items = collectTraining({ questions, trajectoriesDir: dir });
    expect(items).toHaveLength(12);
    for (const x of items) {
      expect(x.positives).toHaveLength(1);
      expect(x.negatives.length).toBeGreaterThan(0);
      expect(x.positives[0]!.length).toBe(FEATURE_NAMES.length);
    }
  });

  it('is deterministic, learns to put the answer first, and keeps excluded features at 0', () => {
    const items = collectTraining({ questions, trajectoriesDir: dir });
    const w = trainWeights(items);
    expect(trainWeights(items)).toEqual(w);
    expect(Object.values(w).some((x) => x !== 0)).toBe(true);
    const without = trainWeights(items, { exclude: ['turn', 'turnN'] });
    expect([without.turn, without.turnN]).toEqual([0, 0]);
  });

  it('fits and measures leave-one-session-out: each session answered by a fit that never saw it', async () => {
    const fit = await fitRanked({ questions, trajectoriesDir: dir });
    expect(fit.grid.length).toBeGreaterThan(1);
    const loso = await leaveOneSessionOut({ questions, trajectoriesDir: dir });
    expect(loso.folds.map((f) => f.session)).toEqual(['one', 'two']);
    expect(loso.rows.map((r) => r.id)).toEqual(questions.map((q) => q.id));
    expect(loso.summary.questions).toBe(12);
    expect(loso.summary.hit_rate).toBeGreaterThan(0.8);
  });

  it('fits without excluded features and under fixed settings, in every held-out fold', async () => {
    const loso = await leaveOneSessionOut({
      questions,
      trajectoriesDir: dir,
      exclude: FEATURE_NAMES,
      tuning: { maxPages: 1 },
    });
    for (const f of loso.folds)
      expect(Object.values(f.fit.weights).every((w) => w === 0)).toBe(true);
    expect(Math.max(...loso.rows.map((r) => r.paged_steps.length))).toBeLessThanOrEqual(1);
  });

  it('measures each ablation leave-one-session-out when asked', async () => {
    const rows = await runAblations({
      train: questions,
      sets: [{ name: 'both', questions }],
      trajectoriesDir: dir,
      ablations: [{ name: 'full' }, { name: 'no features', exclude: FEATURE_NAMES }],
      loso: true,
    });
    expect(rows.map((r) => r.loso?.questions)).toEqual([12, 12]);
    expect(rows[0]!.loso!.hit_rate).toBeGreaterThan(rows[1]!.loso!.hit_rate);
  });
});
