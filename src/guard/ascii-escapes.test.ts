import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { fakeSecrets } from '../test-utils/fake-secrets.js';
import { decodeAsciiEscapes } from './ascii-escapes.js';
import { Redactor } from './redactor.js';

const uEscape = (c: string) => `\\u${c.charCodeAt(0).toString(16).padStart(4, '0')}`;
const redactor = new Redactor();

describe('decodeAsciiEscapes', () => {
  it('decodes \\u escapes of ASCII characters and maps every character back', () => {
    fc.assert(
      fc.property(
        fc.array(fc.tuple(fc.string({ unit: 'binary', maxLength: 3 }), fc.boolean())),
        (parts) => {
          // Each part written as is or, when it is one ASCII character, escaped.
          let text = '';
          let plain = '';
          for (const [s, esc] of parts) {
            if (s.includes('\\')) continue; // a backslash of its own could start an escape
            text += esc && s.length === 1 && s < '\x80' ? uEscape(s) : s;
            plain += s;
          }
          const view = decodeAsciiEscapes(text);
          if (view === null) {
            expect(text).toBe(plain);
            return;
          }
          expect(view.text).toBe(plain);
          expect(view.origin).toHaveLength(plain.length + 1);
          expect(view.origin[plain.length]).toBe(text.length);
          for (let i = 0; i < plain.length; i++) {
            const from = text.slice(view.origin[i]!, view.origin[i + 1]!);
            expect(from === plain[i] || from === uEscape(plain[i]!)).toBe(true);
          }
        },
      ),
      { numRuns: 500 },
    );
  });

  it('leaves an escaped backslash, non-ASCII escapes and texts without escapes alone', () => {
    expect(decodeAsciiEscapes('a\\\\u0041b')).toBeNull();
    expect(decodeAsciiEscapes('caf\\u00e9 \\u4e2d')).toBeNull();
    expect(decodeAsciiEscapes('no escapes here')).toBeNull();
    expect(decodeAsciiEscapes('\\\\\\u0041')?.text).toBe('\\\\A');
  });
});

describe('secrets written with \\u escapes', () => {
  it('are removed with their escaped bytes (JSON ensure_ascii, Go, escaped one by one)', async () => {
    // Before stop 46 none of these was found: the matchers saw only the escaped form.
    const s = fakeSecrets();
    const all = [...s.githubToken].map(uEscape).join('');
    const cases: [string, string][] = [
      [`{"key": "\\u0041${s.awsAccessKeyId.slice(1)}"}`, '{"key": "[REDACTED:aws-access-key-id]"}'],
      [`{"note": "${all}"}`, '{"note": "[REDACTED:github-token]"}'],
      [`{"token": "ghp\\u005f${s.githubToken.slice(4)}"}`, '{"token": "[REDACTED:github-token]"}'],
      [
        `"DB_PASSWORD\\u003d${s.postgresPassword}"`,
        '"DB_PASSWORD\\u003d[REDACTED:env-assignment]"',
      ],
    ];
    for (const [text, stored] of cases) {
      const r = await redactor.redactText(text);
      expect(r.text, text).toBe(stored);
      expect((await redactor.redactText(r.text)).redactions).toEqual([]);
    }
  });

  it('a literal backslash-u sequence (an escaped backslash) is not decoded', async () => {
    const s = fakeSecrets();
    const text = `{"doc": "\\\\u0041${s.awsAccessKeyId.slice(1)}"}`;
    expect((await redactor.redactText(text)).redactions).toEqual([]);
  });
});
