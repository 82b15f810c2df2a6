import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { readTurnsJsonl } from '../import/turns-jsonl.js';
import { UsageError } from '../protocol/errors.js';
import { type EvalQuestion, questionsFileSchema, type TrajectoryTurn } from './types.js';

function readText(path: string, what: string): string {
  try {
    return readFileSync(path, 'utf8');
  } catch (e) {
    const code = (e as NodeJS.ErrnoException).code ?? 'unreadable';
    throw new UsageError(`cannot read ${what} ${path} (${code}); check the path`, { path });
  }
}

/**
 * Reads and validates a questions file (`{ questions: [...] }` or a bare array).
 *
 * @example
 * loadQuestions('../shared/eval/questions.public.json').length; // 60
 */
export function loadQuestions(path: string): EvalQuestion[] {
  let json: unknown;
  try {
    json = JSON.parse(readText(path, 'questions file'));
  } catch (e) {
    if (e instanceof UsageError) throw e;
    throw new UsageError(`questions file ${path} is not valid JSON: ${(e as Error).message}`, {
      path,
    });
  }
  const r = questionsFileSchema.safeParse(json);
  if (!r.success) {
    const issue = r.error.issues[0];
    const where = issue?.path.length ? issue.path.join('.') : '(root)';
    throw new UsageError(`questions file ${path}: ${where}: ${issue?.message}`, { path });
  }
  const questions = r.data;
  // An empty file would print a table of 0% rates and exit 0, read as a measurement.
  if (questions.length === 0) {
    throw new UsageError(`questions file ${path} has no questions: nothing to measure`, { path });
  }
  const seen = new Set<string>();
  for (const q of questions) {
    if (seen.has(q.id)) throw new UsageError(`questions file ${path}: duplicate id '${q.id}'`);
    seen.add(q.id);
    if (!q.gold_steps.includes(q.latest_step)) {
      throw new UsageError(`question ${q.id}: latest_step ${q.latest_step} is not a gold step`);
    }
    if (q.gold_steps.some((s) => s > q.asked_after_step)) {
      throw new UsageError(`question ${q.id}: a gold step is after asked_after_step`);
    }
  }
  return questions;
}

/**
 * Reads one trajectory (`<dir>/<name>.jsonl`): turns in file order, each `step_id` equal to its
 * 0-based position (the history's own index, as IPCF requires).
 *
 * @example
 * loadTrajectory('../shared/data/trajectories', 'palimondo_BookMinder_day-003')[0]?.role;
 */
export function loadTrajectory(dir: string, name: string): TrajectoryTurn[] {
  const path = join(dir, `${name}.jsonl`);
  if (!existsSync(path)) {
    throw new UsageError(
      `cannot read trajectory ${name}: ${path} does not exist (check --trajectories and the question's "trajectory")`,
      { path },
    );
  }
  return readTurnsJsonl(path, { stepIds: 'positional' });
}
