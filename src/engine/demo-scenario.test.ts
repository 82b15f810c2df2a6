import { createHash } from 'node:crypto';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { tempDir } from '../test-utils/temp-dir.js';
import { DEMO_QUESTIONS, demoHistory, runDemo } from './demo-scenario.js';

const sha256 = (text: string) => createHash('sha256').update(text, 'utf8').digest('hex');

describe('runDemo (default retrieval)', () => {
  it('measures the raw history against each prompt with folding, with verified pages', async () => {
    const r = await runDemo({ dir: join(tempDir().dir, '.contextfold') });
    expect(r.retrieval).toBe('ranked');
    expect(r.folded).toBe(500);
    expect(r.raw_history_tokens).toBeGreaterThan(15_000);
    expect(r.questions.map((q) => q.prompt)).toEqual([...DEMO_QUESTIONS.ask]);
    const payloads = new Map(demoHistory().map((t) => [t.stepId, String(t.content)]));
    for (const q of r.questions) {
      expect(q.pages.length, q.prompt).toBeGreaterThan(0);
      expect(q.tokens_with_folding).toBe(
        q.prompt_tokens + q.pages.reduce((s, p) => s + p.tokens, 0),
      );
      expect(q.tokens_with_folding * 100).toBeLessThan(r.raw_history_tokens);
      for (const p of q.pages) {
        // The page is the archived turn, byte for byte, and its hash is the payload's.
        expect(p.content).toBe(payloads.get(p.step_id));
        expect(p.payload_sha256).toBe(sha256(payloads.get(p.step_id)!));
      }
    }
    const steps = r.questions.map((q) => q.pages.map((p) => [p.step_id, p.status]));
    expect(steps[0]).toContainEqual([342, 'latest_chronological']);
    expect(steps[0]).toContainEqual([137, 'latest_chronological']);
    expect(steps[1]![0]).toEqual([447, 'latest_chronological']);
    expect(steps[2]).toEqual([[200, 'latest_chronological']]);
    expect(r.evict.evictions_recorded).toBe(new Set(r.evict.evicted).size);
    expect(r.evict.next_pages).toEqual([]);
    expect(r.tamper.refused).toBe(true);
    expect(r.validate.ok).toBe(false);
  });

  it('runs the reference RGSC when asked', async () => {
    const r = await runDemo({ dir: join(tempDir().dir, '.contextfold'), retrieval: 'reference' });
    expect(r.retrieval).toBe('reference');
    expect(r.questions[0]!.pages.map((p) => p.step_id)).toEqual([342, 137]);
    expect(r.questions[0]!.pages.every((p) => p.status === null)).toBe(true);
  });
});
