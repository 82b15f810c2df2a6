import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { isUsageError } from '../protocol/errors.js';
import { tempDir } from '../test-utils/temp-dir.js';
import { ContextFold } from './context-fold.js';
import type { OpenOptions } from './types.js';

describe('ContextFold.open checks its options', () => {
  it.each<[string, Record<string, unknown>, RegExp]>([
    ['a numeric sessionId', { sessionId: 42 }, /sessionId must be a string, got 42/],
    ['an unknown retrieval', { retrieval: 'fuzzy' }, /retrieval must be 'ranked' or 'reference'/],
    ['a clock that is no function', { clock: 'now' }, /clock must be a function, got "now"/],
    ['onWarning that is no function', { onWarning: true }, /onWarning must be a function/],
    ['readOnly as a string', { readOnly: 'yes' }, /readOnly must be true or false, got "yes"/],
    ['redact as a string', { redact: 'false' }, /redact must be true or false, got "false"/],
    ['mustExist as a number', { mustExist: 1 }, /mustExist must be true or false, got 1/],
    ['a negative lock timeout', { lockTimeoutMs: -5 }, /lockTimeoutMs must be an integer >= 0/],
    ['a lock timeout as a string', { lockTimeoutMs: '300' }, /lockTimeoutMs .* got "300"/],
    ['a NaN compaction threshold', { journalCompactThreshold: Number.NaN }, /journalCompact/],
    ['a pool of no connection', { poolSize: 0 }, /poolSize must be an integer >= 1, got 0/],
    ['a fractional statement timeout', { statementTimeoutMs: 1.5 }, /statementTimeoutMs/],
    // A misspelt option was ignored: `redcat: false` stored redacted text without a word.
    [
      'a misspelt option',
      { redcat: false },
      /has no option 'redcat' \(options: dir, store,.* redact\)/,
    ],
  ])('refuses %s in one usage line, before anything is written', async (_, bad, message) => {
    const dir = join(tempDir().dir, '.contextfold');
    const open = ContextFold.open({ dir, ...bad } as OpenOptions);
    const e = await open.then(
      () => null,
      (err: unknown) => err,
    );
    expect(isUsageError(e)).toBe(true);
    expect((e as Error).message).toMatch(message);
    expect((e as Error).message).not.toContain('\n');
    expect(existsSync(dir)).toBe(false);
  });

  it('takes every option at its documented type', async () => {
    const dir = join(tempDir().dir, '.contextfold');
    const cf = await ContextFold.open({
      dir,
      sessionId: 'chat-42',
      retrieval: 'reference',
      clock: () => new Date('2026-01-01T00:00:00Z'),
      onWarning: () => {},
      readOnly: false,
      redact: false,
      mustExist: false,
      lockTimeoutMs: 0,
      journalCompactThreshold: 0,
      poolSize: 2,
      statementTimeoutMs: 1000,
    });
    await cf.fold({ stepId: 1, summary: 's', content: 'x' });
    await cf.close();
    const node = JSON.parse(readFileSync(join(dir, 'cold_nodes/step_000001.json'), 'utf8'));
    expect(node.session_id).toBe('chat-42');
  });
});
