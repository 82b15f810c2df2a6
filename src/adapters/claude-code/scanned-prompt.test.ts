import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { MAX_SCANNED_PROMPT_CHARS, scannedPrompt } from './scanned-prompt.js';

describe('scannedPrompt', () => {
  it('keeps a prompt up to the bound whole', () => {
    const p = 'x'.repeat(MAX_SCANNED_PROMPT_CHARS);
    expect(scannedPrompt(p)).toEqual({ text: p, cut: null });
  });

  it('beyond it, scans the first and last lines, whole', () => {
    const lines = Array.from({ length: 40 }, (_, i) => `line ${i} ${'a'.repeat(20)}`);
    const prompt = `${lines.join('\n')}\n`;
    const r = scannedPrompt(prompt, 200);
    expect(r.cut).toEqual({ chars: prompt.length, scanned: r.text.length - 1 });
    const [head, tail] = r.text.split('\n\n');
    expect(head!.split('\n')).toEqual(lines.slice(0, head!.split('\n').length));
    expect(`${tail}`.endsWith(`${lines.at(-1)}\n`)).toBe(true);
    expect(prompt.startsWith(head!)).toBe(true);
    expect(prompt.endsWith(tail!)).toBe(true);
    expect(r.text.length).toBeLessThanOrEqual(201);
  });

  it('one long line is cut between words, never inside a surrogate pair (property)', () => {
    const unit = fc.constantFrom('word ', 'ab', '😀', ' ', 'é');
    fc.assert(
      fc.property(
        fc.array(unit, { minLength: 1, maxLength: 120 }),
        fc.integer({ min: 4, max: 60 }),
        (units, max) => {
          const prompt = units.join('');
          const r = scannedPrompt(prompt, max);
          if (prompt.length <= max) {
            expect(r.cut).toBeNull();
            return;
          }
          expect(r.text.length).toBeLessThanOrEqual(max + 1);
          expect(r.text).not.toMatch(
            /[\ud800-\udbff](?![\udc00-\udfff])|(?<![\ud800-\udbff])[\udc00-\udfff]/u,
          );
          expect(scannedPrompt(prompt, max)).toEqual(r);
        },
      ),
    );
  });
});
