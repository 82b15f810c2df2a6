import { execFileSync } from 'node:child_process';
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import type { FoldInput } from '../engine/types.js';

/** One generated turn, as `synth.py` writes it. */
export interface SynthTurn {
  step_id: number;
  summary: string;
  raw_content: string;
}

/** Progress for a person, on stderr (stdout is the JSON result). */
export const log = (s: string): void => {
  process.stderr.write(`[bench] ${s}\n`);
};

/**
 * Generates `n` synthetic turns of ~2 KB and their queries with `../shared/bench/synth.py` (the
 * generator the reference engine was measured with), into `work`.
 */
export function synthesize(n: number, work: string): { turns: SynthTurn[]; queries: string[] } {
  const script = fileURLToPath(new URL('../../../shared/bench/synth.py', import.meta.url));
  if (!existsSync(script)) {
    throw new Error(
      `the turn generator ${script} is missing: the bench needs ../shared beside the repository`,
    );
  }
  const out = join(work, `turns_${n}.jsonl`);
  const qout = join(work, `queries_${n}.jsonl`);
  log(`generating ${n} turns with synth.py …`);
  execFileSync('python3', [script, '--n', String(n), '--out', out, '--queries-out', qout], {
    stdio: 'ignore',
  });
  const turns = readFileSync(out, 'utf8')
    .split('\n')
    .filter(Boolean)
    .map((l) => JSON.parse(l) as SynthTurn);
  const queries = readFileSync(qout, 'utf8')
    .split('\n')
    .filter(Boolean)
    .map((l) => (JSON.parse(l) as { prompt: string }).prompt);
  return { turns, queries };
}

/** A generated turn as a fold input. */
export const toInput = (t: SynthTurn): FoldInput => ({
  stepId: t.step_id,
  summary: t.summary,
  content: t.raw_content,
});
