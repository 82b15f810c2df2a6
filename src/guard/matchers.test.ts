import { describe, expect, it } from 'vitest';
import { compileSyncMatcher } from './matchers.js';

const pem = compileSyncMatcher({ kind: 'pem-block', max_chars: 4096 })!;
const KEY = ['RSA', 'PRIVATE', 'KEY'].join(' ');
const body = ['MIIE'.padEnd(64, 'A'), 'B'.repeat(64), 'C'.repeat(20)];

describe('pem-block', () => {
  it('spans BEGIN to END across LF, CRLF and escaped line breaks', () => {
    for (const nl of ['\n', '\r\n', '\\n']) {
      const block = `-----BEGIN ${KEY}-----${nl}${body.join(nl)}${nl}-----END ${KEY}-----`;
      const text = `before ${block} after`;
      expect(pem(text)).toEqual([{ start: 7, end: 7 + block.length }]);
    }
  });

  it('ends an unterminated block after its last base64 line, keeping the next line', () => {
    const text = `-----BEGIN ${KEY}-----\n${body.join('\n')}\n$ echo next`;
    const [span] = pem(text);
    expect(text.slice(span!.end)).toBe('\n$ echo next');
  });

  it('accepts line-number prefixes of a file viewer inside an unterminated block', () => {
    const lines = body.map((l, i) => `${String(i + 2).padStart(6)}→${l}`);
    const text = `     1→-----BEGIN ${KEY}-----\n${lines.join('\n')}\n     5→`;
    const [span] = pem(text);
    expect(text.slice(span!.end)).toBe('\n     5→');
  });

  it('does not reach past max_chars for an END', () => {
    const text = `-----BEGIN ${KEY}-----\nnot base64 at all\n${'x'.repeat(5000)}\n-----END ${KEY}-----`;
    const [span] = pem(text);
    expect(span!.end).toBe(`-----BEGIN ${KEY}-----`.length);
  });
});

describe('mixed-script', () => {
  const m = compileSyncMatcher({ kind: 'mixed-script', script: 'Latin', confusables: 'аео' })!;
  it('flags a Latin word holding a look-alike, not words of either script alone', () => {
    expect(m('log in at p\u0430ypal now')).toEqual([{ start: 10, end: 16 }]);
    expect(m('привет world')).toEqual([]);
    expect(m('ключ API')).toEqual([]);
  });
});

describe('regex', () => {
  it('selects a group and drops rejected values', () => {
    const m = compileSyncMatcher({
      kind: 'regex',
      pattern: 'key=(\\S+)',
      flags: '',
      group: 1,
      reject_value: { pattern: '^\\$', flags: '' },
    })!;
    expect(m('a key=abc key=$REF')).toEqual([{ start: 6, end: 9 }]);
  });
});
