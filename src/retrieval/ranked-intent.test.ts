import fc from 'fast-check';
import { describe, expect, it, vi } from 'vitest';
import { foldToken } from '../extract/fold-token.js';
import {
  ANSWER_SHAPES,
  askedShapes,
  EARLIEST_CUES,
  ERROR_CUES,
  ERROR_LINE,
  hasErrorSignal,
  heldShapes,
  LATEST_CUES,
  promptIntent,
  SHAPE_PATTERNS,
} from './ranked-intent.js';

// foldToken counted (same results): promptIntent reads each distinct word once.
vi.mock('../extract/fold-token.js', async (load) => {
  const real = await load<typeof import('../extract/fold-token.js')>();
  return { ...real, foldToken: vi.fn(real.foldToken) };
});

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

  it('reads a repeated word once, and stops once no word can change the answer', () => {
    const fold = vi.mocked(foldToken);
    fold.mockClear();
    // A pasted log: 200,000 words, three distinct (a 7.4 MB prompt took 6 s here).
    expect(promptIntent('INFO ok done '.repeat(200_000))).toEqual({ time: 'none', error: false });
    expect(fold.mock.calls.length).toBe(3);
    fold.mockClear();
    expect(promptIntent(`first latest error ${'x '.repeat(200_000)}`)).toEqual({
      time: 'none',
      error: true,
    });
    expect(fold.mock.calls.length).toBe(3);
  });

  it('gives what reading every word gives (property)', () => {
    // The reading before words were read once: every occurrence, to the end.
    const everyWord = (prompt: string) => {
      let latest = false;
      let earliest = false;
      let error = false;
      for (const m of prompt.matchAll(/[\p{L}\p{N}']+/gu)) {
        const w = foldToken(m[0]).replace(/'.*$/u, '');
        if (LATEST_CUES.has(w)) latest = true;
        if (EARLIEST_CUES.has(w)) earliest = true;
        if (ERROR_CUES.has(w) || /n't$/u.test(foldToken(m[0]))) error = true;
      }
      if (/\b(?:still|right now)\b/iu.test(prompt)) latest = true;
      const time = earliest && !latest ? 'earliest' : latest && !earliest ? 'latest' : 'none';
      return { time, error };
    };
    const word = fc.constantFrom(
      'now',
      'NOW',
      'Latest',
      'still',
      'right now',
      'first',
      'Original',
      'error',
      'FAILED',
      "couldn't",
      "can't've",
      'port',
      'nowhere',
      'İ',
      'x',
    );
    const prompt = fc
      .array(fc.tuple(word, fc.constantFrom(' ', '\n', '. ', "'")), { maxLength: 12 })
      .map((ws) => ws.map(([w, g]) => w + g).join(''));
    fc.assert(
      fc.property(prompt, (p) => {
        expect(promptIntent(p)).toEqual(everyWord(p));
      }),
    );
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

describe('the payload patterns without the i flag', () => {
  // The words of the caseless patterns in any case, with ſ (U+017F) for s and K (U+212A) for k
  // (the two characters that fold into ASCII), after and before numbers, breaks, word and
  // non-word characters.
  const word = fc
    .tuple(
      fc.constantFrom(
        ...'tests passed failed failures examples specs doctests kb kib mb gib bytes tokens lines files chars characters ms seconds minutes issues errors warnings insertions deletions items command cmd bash sh shell console running port errno exception traceback fatal panic denied refused cannot invalid deprecated exceeds'.split(
          ' ',
        ),
        'not found',
        'no such',
        "can't",
        'unable to',
        'exit code 3',
        'exit status 0',
        'err!',
      ),
      fc.array(fc.integer({ min: 0, max: 3 }), { minLength: 12, maxLength: 12 }),
    )
    .map(([w, cases]) =>
      [...w]
        .map((c, i) => {
          const k = cases[i % cases.length]!;
          if (k === 1) return c.toUpperCase();
          if (k === 2 && c === 's') return '\u017f';
          if (k === 3 && c === 'k') return '\u212a';
          return c;
        })
        .join(''),
    );
  const glue = fc.constantFrom(
    ' ',
    '',
    '\n',
    '\r\n',
    ':',
    '$ ',
    '> ',
    '"',
    '(',
    '.',
    '_',
    '!',
    '```',
    'x',
    'é',
    'ſ',
    'İ',
    '\u212a',
    '\t',
    '5',
    '12 ',
    '3.5',
    '$',
  );
  const text = fc
    .array(fc.oneof(word, glue, fc.nat(99999).map(String), fc.string({ maxLength: 3 })), {
      maxLength: 16,
    })
    .map((p) => p.join(''));

  it('match what the definitions match (property)', () => {
    fc.assert(
      fc.property(text, (t) => {
        ANSWER_SHAPES.forEach((s, i) => {
          expect(SHAPE_PATTERNS[i]!.test(t), `${s.name}: ${JSON.stringify(t)}`).toBe(
            s.shape.test(t),
          );
        });
        expect(hasErrorSignal(t)).toBe(ERROR_LINE.test(t));
      }),
      { numRuns: 3000 },
    );
  });
});
