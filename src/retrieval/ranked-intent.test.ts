import { describe, expect, it } from 'vitest';
import { askedShapes, hasErrorSignal, heldShapes, promptIntent } from './ranked-intent.js';

describe('promptIntent', () => {
  it('reads time cues', () => {
    expect(promptIntent('What port is it on now?').time).toBe('latest');
    expect(promptIntent('What was the latest result?').time).toBe('latest');
    expect(promptIntent('The last time it ran, what failed?').time).toBe('latest');
    expect(promptIntent('Why did the very first attempt fail?').time).toBe('earliest');
    expect(promptIntent('Which port does it use?').time).toBe('none');
    // Both cues cancel out.
    expect(promptIntent('Did the first run differ from the latest one?').time).toBe('none');
  });

  it('reads error cues, including negated verbs', () => {
    expect(promptIntent('What was the error?').error).toBe(true);
    expect(promptIntent("Why couldn't you print the tree?").error).toBe(true);
    expect(promptIntent('Which port is configured?').error).toBe(false);
  });
});

describe('hasErrorSignal', () => {
  it('finds failures in the usual shapes', () => {
    for (const t of [
      'zsh: command not found: tree',
      '<tool_use_error>File content (806.5KB) exceeds maximum allowed size',
      'Traceback (most recent call last):',
      'npm ERR! code ELIFECYCLE',
      '3 tests, 2 failures',
      'Exit code 1',
    ]) {
      expect(hasErrorSignal(t), t).toBe(true);
    }
  });

  it('does not flag clean output', () => {
    expect(hasErrorSignal('12 tests, 0 failures')).toBe(false);
    expect(hasErrorSignal('Compiled 3 files')).toBe(false);
  });
});

describe('answer shapes', () => {
  it('prompts ask for shapes by their cues', () => {
    expect(askedShapes("What's the short hash of that commit?")).toEqual(['hash']);
    expect(askedShapes('Which version of the library?')).toEqual(['version']);
    expect(askedShapes('How many tests passed?')).toEqual(['test-result', 'quantity']);
    expect(askedShapes('What command did you run?')).toEqual(['command']);
    expect(askedShapes('Which line of the file?')).toEqual(['line']);
    expect(askedShapes('What port is the server on?')).toEqual(['port']);
    expect(askedShapes('Why did it break?')).toEqual([]);
  });

  it('payloads hold shapes', () => {
    expect(heldShapes('[main 0925f8d] Modernize project structure')).toContain('hash');
    expect(heldShapes('phoenix_live_view 1.1.22')).toContain('version');
    expect(heldShapes('14 doctests, 127 tests, 0 failures')).toContain('test-result');
    expect(heldShapes('Wrote 356 lines to docs/x.md')).toContain('quantity');
    expect(heldShapes('{\n "command": "git log --oneline -5"\n}')).toContain('command');
    expect(heldShapes('17:priv/static/assets/')).toContain('line');
    expect(heldShapes('http: [ip: {127, 0, 0, 1}, port: 1100]')).toContain('port');
  });

  it('plain words are not hashes, dates are not versions', () => {
    expect(heldShapes('deadbeef cafe facade')).not.toContain('hash');
    expect(heldShapes('released 2024-05-01')).not.toContain('version');
  });
});
