import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { isUsageError } from '../protocol/errors.js';
import { tempDir } from '../test-utils/temp-dir.js';
import { ContextFold } from './context-fold.js';

const caught = (p: () => Promise<unknown>): Promise<unknown> =>
  p().then(
    () => null,
    (e: unknown) => e,
  );

describe('the per-call options refuse unknown keys, as ContextFold.open does', () => {
  it('refuses a misspelt option of each method in one usage line, naming the options', async () => {
    const dir = join(tempDir().dir, '.contextfold');
    const cf = await ContextFold.open({ dir });
    await cf.fold({ stepId: 1, summary: 'postgres port', content: 'PostgreSQL listens on 5433' });
    const bad = { typo: 1 } as never;
    const cases: [() => Promise<unknown>, RegExp][] = [
      [
        () => cf.scan('postgres port?', bad),
        /^scan has no option 'typo' \(options: mode, liveFrom,/,
      ],
      [() => cf.pageIn('postgres port?', bad), /^pageIn has no option 'typo' \(options: mode,/],
      [
        () => cf.hydrate(1, bad),
        /^hydrate has no option 'typo' \(options: window, chunk, maxTokens\)/,
      ],
      [() => cf.recall('postgres', bad), /^recall has no option 'typo' \(options: limit\)/],
      [() => cf.entriesAfter(bad), /^entriesAfter has no option 'typo' \(options: after, limit\)/],
      [() => cf.entriesPage(bad), /^entriesPage has no option 'typo' \(options: offset, limit\)/],
      [
        async () => {
          for await (const _ of cf.entryPages(bad));
        },
        /^entryPages has no option 'typo' \(options: pageSize\)/,
      ],
      [() => cf.reindex(bad), /^reindex has no option 'typo' \(options: onProgress\)/],
      [() => cf.close(bad), /^close has no option 'typo' \(options: compact\)/],
      [() => cf.scan('postgres port?', 'ranked' as never), /^scan options must be an object/],
    ];
    for (const [fn, re] of cases) {
      const e = await caught(fn);
      expect(isUsageError(e), String(re)).toBe(true);
      expect((e as Error).message).toMatch(re);
      expect((e as Error).message).not.toContain('\n');
    }
    // Known keys, an empty object and no options at all still work.
    expect((await cf.scan('postgres port?', {})).selected.map((p) => p.step_id)).toEqual([1]);
    expect((await cf.scan('postgres port?', { maxTokens: 500 })).selected).toHaveLength(1);
    expect((await cf.hydrate(1, { chunk: 0 })).content).toContain('5433');
    await cf.close();
  });

  it('refuses a fold input with a misspelt field before anything is written', async () => {
    // `contnet` was ignored: the summary was folded as the payload, the content lost.
    const dir = join(tempDir().dir, '.contextfold');
    const cf = await ContextFold.open({ dir });
    const input = { stepId: 1, summary: 's', contnet: 'the payload' } as never;
    for (const fold of [() => cf.fold(input), () => cf.foldMany([input])]) {
      const e = await caught(fold);
      expect(isUsageError(e)).toBe(true);
      expect((e as Error).message).toMatch(
        /^fold input has no field 'contnet' \(fields: stepId, summary, content, files, commands, errors\)/,
      );
    }
    expect(existsSync(dir)).toBe(false);
    await cf.close();
  });
});
