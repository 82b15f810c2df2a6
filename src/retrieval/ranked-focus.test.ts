import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { ANALYSIS_CHARS } from './block-spans.js';
import { ELISION, focusedText, focusWindow } from './ranked-focus.js';
import { rankedTerms } from './ranked-terms.js';

/** The retrieval key of a word, as the index stores it (`needle` → `needl`). */
const key = (word: string) => rankedTerms(word)[0]!;

// One token per character keeps the arithmetic checkable by hand.
const count = (s: string) => s.length;

const filler = (n: number, tag: string) =>
  Array.from({ length: n }, (_, i) => `${tag} line ${String(i).padStart(3, '0')}\n`).join('');

describe('focusWindow', () => {
  it('returns a payload that fits whole', () => {
    const w = focusWindow({ content: 'a\nb\n', focus: [], maxTokens: 10, count });
    expect(w).toEqual({
      text: 'a\nb\n',
      tokens: 4,
      startLine: 0,
      endLine: 2,
      tailLines: 0,
      lines: 2,
      truncated: false,
    });
  });

  it('pages the lines that hold the matched keys, not the head of a large turn', () => {
    const content = `${filler(200, 'noise')}Finished in 0.5 seconds\n10 tests, 0 failures\n${filler(50, 'tail')}`;
    const w = focusWindow({
      content,
      focus: [{ key: key('failures'), weight: 2 }],
      maxTokens: 300,
      count,
    });
    expect(w.text).toContain('10 tests, 0 failures');
    expect(w.tokens).toBeLessThanOrEqual(300);
    expect(w.truncated).toBe(true);
    // Whole lines, contiguous, in order.
    expect(content.includes(w.text)).toBe(true);
    expect(w.text.endsWith('\n')).toBe(true);
    expect(content.split('\n').slice(w.startLine, w.endLine).join('\n')).toBe(w.text.slice(0, -1));
  });

  it('prefers the window covering more distinct keys over repeats of one', () => {
    const content = `${'alpha\n'.repeat(30)}${filler(100, 'x')}alpha beta gamma\n${filler(100, 'y')}`;
    const w = focusWindow({
      content,
      focus: [
        { key: 'alpha', weight: 1 },
        { key: 'beta', weight: 1 },
        { key: 'gamma', weight: 1 },
      ],
      maxTokens: 120,
      count,
    });
    expect(w.text).toContain('alpha beta gamma');
  });

  it('with no matched key: the head of the payload', () => {
    const content = filler(100, 'z');
    const w = focusWindow({ content, focus: [{ key: 'absent', weight: 1 }], maxTokens: 50, count });
    expect(w.startLine).toBe(0);
    expect(content.startsWith(w.text)).toBe(true);
  });

  it('a tight window keeps only a few lines of context', () => {
    const content = `${filler(50, 'a')}needle here\n${filler(50, 'b')}`;
    const w = focusWindow({
      content,
      focus: [{ key: key('needle'), weight: 1 }],
      maxTokens: 2000,
      count,
      context: 1,
    });
    expect(w.text.split('\n').filter(Boolean)).toHaveLength(3);
    expect(w.text).toContain('needle here');
  });

  it('cuts a single over-long line without splitting a surrogate pair', () => {
    const content = `${'😀'.repeat(500)}\n`;
    const w = focusWindow({ content, focus: [], maxTokens: 101, count });
    expect(w.tokens).toBeLessThanOrEqual(101);
    expect(
      /[\uD800-\uDBFF](?![\uDC00-\uDFFF])|(?<![\uD800-\uDBFF])[\uDC00-\uDFFF]/.test(w.text),
    ).toBe(false);
  });

  it('never exceeds the cap and always returns a substring of the payload', () => {
    fc.assert(
      fc.property(
        fc.array(fc.string({ maxLength: 40 }), { maxLength: 60 }),
        fc.integer({ min: 1, max: 200 }),
        fc.subarray(['alpha', 'beta', 'port', 'test']),
        (lines, cap, keys) => {
          const content = lines.join('\n');
          const w = focusWindow({
            content,
            focus: keys.map((key) => ({ key, weight: 1 })),
            maxTokens: cap,
            count,
          });
          expect(w.tokens).toBeLessThanOrEqual(Math.max(cap, 0));
          expect(w.tokens).toBe(count(w.text));
          expect(content.includes(w.text)).toBe(true);
        },
      ),
    );
  });
});

describe('focusWindow with a tail (turns that end with their outcome)', () => {
  // The command near the head, 300 lines of build output, the outcome on the last line.
  const content = `$ mix test renderer\n${filler(300, 'compiling')}agentId: a2898e3\n`;
  const focus = [{ key: key('renderer'), weight: 3 }];

  it('shows the last lines after an elision line when the window stops short of them', () => {
    const w = focusWindow({ content, focus, maxTokens: 200, count, tail: true });
    expect(w.text.startsWith('$ mix test renderer\n')).toBe(true);
    expect(w.text.endsWith('compiling line 299\nagentId: a2898e3\n')).toBe(true);
    expect(w.text.split(ELISION)).toHaveLength(2);
    expect(w.tokens).toBeLessThanOrEqual(200);
    expect(w.tailLines).toBeGreaterThan(0);
    expect(w.truncated).toBe(true);
    // Without the option the window is one run of lines, and the outcome is not in it.
    const plain = focusWindow({ content, focus, maxTokens: 200, count });
    expect(plain.tailLines).toBe(0);
    expect(plain.text).not.toContain('a2898e3');
  });

  it('adds no tail when the window already reaches the end', () => {
    const atEnd = `${filler(300, 'compiling')}$ mix test renderer\n10 tests, 0 failures\n`;
    const w = focusWindow({ content: atEnd, focus, maxTokens: 200, count, tail: true });
    expect(w.tailLines).toBe(0);
    expect(w.text).not.toContain(ELISION);
    expect(atEnd.endsWith(w.text)).toBe(true);
  });

  it('is re-derived byte for byte from its record (replay), and drops the tail under a tiny cap', () => {
    const w = focusWindow({ content, focus, maxTokens: 200, count, tail: true });
    const again = focusedText({
      content,
      startLine: w.startLine,
      endLine: w.endLine,
      tailLines: w.tailLines,
      maxTokens: 200,
      count,
    });
    expect(again).toEqual(w);
    const tiny = focusedText({ ...again, content, tailLines: w.tailLines, maxTokens: 22, count });
    expect(tiny.tokens).toBeLessThanOrEqual(22);
    expect(tiny.tailLines).toBe(0);
  });
});

describe('focusWindow: a payload over ANALYSIS_CHARS', () => {
  // 64-character lines: a huge log with one line of interest in its head, middle and tail.
  const lines = Math.ceil((3 * ANALYSIS_CHARS) / 64);
  const row = (i: number) => `${`step ${i} built`.padEnd(63, '.')}\n`;
  const at = { head: 1000, middle: Math.floor(lines / 2), tail: lines - 1000 };
  const content = Array.from({ length: lines }, (_, i) =>
    i === at.head ? `${'needle head'.padEnd(63, '.')}\n` : row(i),
  )
    .map((l, i) => (i === at.middle ? `${'needle middle'.padEnd(63, '.')}\n` : l))
    .map((l, i) => (i === at.tail ? `${'needle tail'.padEnd(63, '.')}\n` : l))
    .join('');
  const counted = (seen: { chars: number }) => (s: string) => {
    seen.chars += s.length;
    return s.length;
  };
  const focus = (...words: string[]) => words.map((w) => ({ key: key(w), weight: 1 }));

  it('looks for the window in the head and the tail its analysis reads, counting only those', () => {
    const seen = { chars: 0 };
    const w = focusWindow({
      content,
      focus: focus('needle', 'tail'),
      maxTokens: 640,
      count: counted(seen),
    });
    expect(w.text).toContain('needle tail');
    expect(w.startLine).toBeLessThanOrEqual(at.tail);
    expect(w.endLine).toBeGreaterThan(at.tail);
    expect(w.lines).toBe(lines);
    // The whole payload once (its count, which the engine has stored), the lines read, the window.
    expect(seen.chars - content.length).toBeLessThanOrEqual(ANALYSIS_CHARS + 4 * 640);
  });

  it('finds a key of the head, and never pages the unread middle', () => {
    const w = focusWindow({ content, focus: focus('head', 'middle'), maxTokens: 640, count });
    expect(w.text).toContain('needle head');
    expect(w.text).not.toContain('needle middle');
    const none = focusWindow({ content, focus: focus('middle'), maxTokens: 640, count });
    expect(none.startLine).toBe(0);
  });

  it('replays the window it chose from its lines', () => {
    const w = focusWindow({ content, focus: focus('tail'), maxTokens: 640, tail: true, count });
    const again = focusedText({
      content,
      startLine: w.startLine,
      endLine: w.endLine,
      tailLines: w.tailLines,
      maxTokens: 640,
      count,
    });
    expect(again).toEqual(w);
  });
});
