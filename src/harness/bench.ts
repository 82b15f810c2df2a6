import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { performance } from 'node:perf_hooks';
import { Session } from './session.js';
import { syntheticSession } from './synthetic.js';

function percentile(sorted: number[], p: number): number {
  if (sorted.length === 0) return 0;
  const i = Math.min(sorted.length - 1, Math.max(0, Math.ceil((p / 100) * sorted.length) - 1));
  return sorted[i]!;
}

/**
 * Pack assembly latency over a 1,000-turn synthetic session (o200k tokens, 16k budget, every
 * tenth prompt asks about an old turn so page-in runs too): the time of each `beforeTurn`,
 * which is what an agent loop waits for before its model call (folding, window, page-in and
 * assembly included). Runs in a temporary store that is removed afterwards.
 *
 * @example
 * const { p50_ms, p99_ms } = await benchPackAssembly();
 */
export async function benchPackAssembly(): Promise<{
  p50_ms: number;
  p99_ms: number;
  turns: number;
}> {
  const turns = 1000;
  const root = mkdtempSync(join(tmpdir(), 'cf-bench-'));
  try {
    const session = await Session.open({
      dir: join(root, '.contextfold'),
      budget: 16_000,
      keepRecent: 8,
    });
    await session.append({ role: 'system', content: 'You are a careful coding agent.' });
    const times: number[] = [];
    const script = syntheticSession({ turns });
    for (const [i, t] of script.entries()) {
      const prompt =
        i % 10 === 9 && i > 40 ? `${t.prompt} What did marker${i - 37} show?` : t.prompt;
      const start = performance.now();
      await session.beforeTurn(prompt);
      times.push(performance.now() - start);
      await session.afterTurn(t.response);
    }
    await session.close();
    times.sort((a, b) => a - b);
    const round = (x: number): number => Math.round(x * 1000) / 1000;
    return { p50_ms: round(percentile(times, 50)), p99_ms: round(percentile(times, 99)), turns };
  } finally {
    rmSync(root, { recursive: true, force: true });
  }
}
