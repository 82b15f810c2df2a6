import { describe, expect, it } from 'vitest';
import { LockTimeoutError, StepConflictError } from '../../protocol/errors.js';
import { IntegrityCheckError } from '../../protocol/ipcf-errors.js';
import {
  hookFailureLine,
  hookWarningLine,
  MAX_HOOK_LINE_CHARS,
  refusesStore,
} from './hook-failure.js';

describe('hookFailureLine', () => {
  it('names the error and its code, on one line with no stack, and the path it names', () => {
    const e = new IntegrityCheckError('journal line 2 is corrupt\n  (checksum mismatch)', {
      path: '/s/recall_index.journal',
    });
    expect(hookFailureLine(e)).toBe(
      'contextfold: IntegrityCheckError (INTEGRITY_CHECK): journal line 2 is corrupt (checksum mismatch) (/s/recall_index.journal)',
    );
    const lock = new LockTimeoutError('store is locked: /s/write.lock', { path: '/s/write.lock' });
    expect(hookFailureLine(lock)).toBe(
      'contextfold: LockTimeoutError (LOCK_TIMEOUT): store is locked: /s/write.lock',
    );
  });

  it('an unexpected error is one line without its stack; a system error is not called a bug', () => {
    const bug = new TypeError('x is undefined');
    expect(hookFailureLine(bug)).toBe(
      'contextfold: internal error (please report): x is undefined',
    );
    const full = Object.assign(new Error('ENOSPC: no space left on device, write'), {
      code: 'ENOSPC',
      path: '/s/cold_nodes/step_000001.json',
    });
    expect(hookFailureLine(full)).toBe(
      'contextfold: ENOSPC: ENOSPC: no space left on device, write (/s/cold_nodes/step_000001.json)',
    );
  });

  it('is bounded, whatever the message', () => {
    const line = hookFailureLine(new StepConflictError('x'.repeat(100_000), { path: '/p' }));
    expect(line.length).toBeLessThan(MAX_HOOK_LINE_CHARS + 100);
    expect(line).toMatch(/…$|… \(\/p\)$/u);
  });
});

describe('hookWarningLine', () => {
  it("is the message's first line, bounded, and the path", () => {
    const line = hookWarningLine({
      code: 'INDEX_REBUILT',
      message: `the derived index is not usable: ${'y'.repeat(5_000)}\nat Database.prepare (x.js:1:1)`,
      path: '/s/index-1.sqlite',
    });
    expect(line.startsWith('contextfold: warning: the derived index is not usable: yyy')).toBe(
      true,
    );
    expect(line).not.toContain('Database.prepare');
    expect(line.endsWith('… (/s/index-1.sqlite)')).toBe(true);
    expect(line.length).toBeLessThan(MAX_HOOK_LINE_CHARS + 60);
  });
});

describe('refusesStore', () => {
  it('refuses tampered or inconsistent state, not a busy lock or a refused turn', () => {
    expect(refusesStore(new IntegrityCheckError('x'))).toBe(true);
    expect(refusesStore(new LockTimeoutError('x'))).toBe(false);
    expect(refusesStore(new StepConflictError('x'))).toBe(false);
    expect(refusesStore(new Error('x'))).toBe(false);
  });
});
