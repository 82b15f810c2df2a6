import { describe, expect, it } from 'vitest';
import { HAS_SHARED, sharedPath } from '../test-utils/shared.js';
import { loadQuestions } from './load.js';
import { runEval } from './run-eval.js';

describe.skipIf(!HAS_SHARED)('the memory retriever', () => {
  it('pages exactly what the engine pages (same analysis, scan and windows)', async () => {
    const questions = loadQuestions(sharedPath('eval', 'questions.public.json')).filter(
      (q) => q.trajectory.startsWith('SWE-agent') || q.trajectory.includes('subagent'),
    );
    expect(questions.length).toBeGreaterThan(8);
    const trajectoriesDir = sharedPath('data', 'trajectories');
    const strip = (r: Awaited<ReturnType<typeof runEval>>) =>
      r.rows.map(({ scan_ms: _ms, ...rest }) => rest);
    const engine = await runEval({ questions, trajectoriesDir, mode: 'ranked' });
    const memory = await runEval({ questions, trajectoriesDir, retriever: { kind: 'memory' } });
    expect(strip(memory)).toEqual(strip(engine));
    expect(memory.mode).toBe('ranked-memory');
  });
});
