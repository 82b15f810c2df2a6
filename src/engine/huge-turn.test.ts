import { describe, expect, it } from 'vitest';
import { ANALYSIS_CHARS } from '../retrieval/block-spans.js';
import { tempDir } from '../test-utils/temp-dir.js';
import { ContextFold } from './context-fold.js';

// A pasted log two and a half times the analysis' read budget: 64-character lines, one of interest in the
// head, the middle and the tail.
const rows = Math.ceil((5 * ANALYSIS_CHARS) / 2 / 64);
const line = (i: number, text: string) => `${`${text} ${i}`.padEnd(63, '.')}\n`;
const marks = new Map([
  [500, 'migration billing_v12 applied on port 5433'],
  [Math.floor(rows / 2), 'zookeeper quorum lost on node ensemble-7'],
  [rows - 500, 'terraform drift detected in module vpc_peering'],
]);
const log = Array.from({ length: rows }, (_, i) => line(i, marks.get(i) ?? 'step built')).join('');

describe('a turn longer than the analysis reads', () => {
  it('is stored whole, and a scan finds the keys of its head and its tail', async () => {
    const dir = tempDir().dir;
    const cf = await ContextFold.open({ dir, tokenizer: 'reference', redact: false });
    await cf.foldMany([
      { stepId: 0, summary: 'user: run the build', content: 'Please run the full build.' },
      { stepId: 1, summary: 'tool: build log', content: log },
      { stepId: 2, summary: 'assistant: note', content: 'The build finished; reading the log.' },
    ]);
    expect(Buffer.from(await cf.hydrateBytes(1)).toString('utf8')).toBe(log);
    const tail = await cf.pageIn('Was terraform drift detected in vpc_peering?');
    const page = tail.pages.find((p) => p.step_id === 1)!;
    expect(page.content).toContain('terraform drift detected in module vpc_peering');
    expect(page.window!.lines).toBe(rows);
    const head = await cf.pageIn('Which port did migration billing_v12 use?');
    expect(head.pages.find((p) => p.step_id === 1)!.content).toContain('billing_v12 applied');
    // The middle is kept (hydrate above) but not indexed: the ranked scan does not know it.
    const middle = await cf.scan('zookeeper quorum ensemble');
    expect(middle.selected?.some((p) => p.step_id === 1) ?? false).toBe(false);
    // The reference recall matches the node's identifiers, extracted from the whole payload.
    const recalled = await cf.recall('zookeeper quorum ensemble');
    expect(recalled.candidates.map((c) => c.step_id)).toEqual([1]);
    await cf.close();
  });
});
