import { describe, expect, it } from 'vitest';
import type { HydrateOptions, HydrateResult } from '../engine/types.js';
import { ReplayPages } from './replay-pages.js';

/** A fake hydrate that counts its calls and pages in `chars` characters of step `step`. */
function counting(chars = 10) {
  const calls: string[] = [];
  const hydrate = async (step: number, options: HydrateOptions): Promise<HydrateResult> => {
    calls.push(`${step} ${JSON.stringify(options)}`);
    if (step < 0) throw new Error(`no step ${step}`);
    return {
      step_id: step,
      content: String(step).repeat(chars).slice(0, chars),
      tokens: 3,
      chunk: options.chunk ?? 0,
      chunks: 1,
      truncated: false,
      payload_sha256: 'a'.repeat(64),
      verified: true,
      encoding: 'utf8',
      findings: [{ pattern_id: 'p', severity: 'high', start: 0, end: 1 }],
    };
  };
  return { calls, hydrate };
}

describe('ReplayPages', () => {
  it('hydrates a step with the same options once, and another window or chunk again', async () => {
    const { calls, hydrate } = counting();
    const pages = new ReplayPages();
    const window = { start_line: 0, end_line: 3, lines: 3, max_tokens: 8 };
    const a = await pages.hydrate(7, { window }, hydrate);
    const b = await pages.hydrate(7, { window: { ...window } }, hydrate);
    await pages.hydrate(7, { window: { ...window, end_line: 4 } }, hydrate);
    await pages.hydrate(7, { maxTokens: 8, chunk: 0 }, hydrate);
    await pages.hydrate(7, { maxTokens: 8, chunk: 1 }, hydrate);
    await pages.hydrate(8, { window }, hydrate);
    expect(calls).toHaveLength(5);
    expect(b).toEqual(a);
    // Each turn gets its own result: changing one page's findings does not reach the next.
    expect(b).not.toBe(a);
    expect(b.findings).not.toBe(a.findings);
    expect(b.findings[0]).not.toBe(a.findings[0]);
  });

  it('keeps no failure: a hydration that threw is tried again', async () => {
    const { calls, hydrate } = counting();
    const pages = new ReplayPages();
    await expect(pages.hydrate(-1, {}, hydrate)).rejects.toThrow('no step -1');
    await expect(pages.hydrate(-1, {}, hydrate)).rejects.toThrow('no step -1');
    expect(calls).toHaveLength(2);
    expect(pages.size).toBe(0);
  });

  it('is bounded by the characters it keeps, the least recently used dropped first', async () => {
    const { calls, hydrate } = counting(10);
    const pages = new ReplayPages(30);
    for (const step of [1, 2, 3]) await pages.hydrate(step, {}, hydrate);
    await pages.hydrate(1, {}, hydrate); // 1 is now the most recently used
    await pages.hydrate(4, {}, hydrate); // 2 goes
    expect(pages.size).toBe(3);
    await pages.hydrate(1, {}, hydrate);
    await pages.hydrate(3, {}, hydrate);
    expect(calls).toEqual(['1 {}', '2 {}', '3 {}', '4 {}']);
    await pages.hydrate(2, {}, hydrate);
    expect(calls).toHaveLength(5);
    // A page larger than the bound is served, not kept.
    const big = new ReplayPages(5);
    expect((await big.hydrate(9, {}, hydrate)).content).toBe('9999999999');
    expect(big.size).toBe(0);
  });
});
