import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { noise } from '../test-utils/fake-secrets.js';
import { compileSyncMatcher } from './matchers.js';
import { Redactor } from './redactor.js';
import { loadGuardTables } from './tables.js';

const tables = loadGuardTables();
const rule = tables.patterns.find((p) => p.id === 'secret:cookie-value')!;
const ALNUM = 'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789';

/** The rule before stop 46: a lookbehind to the header, at most 2,048 characters back. */
const before = compileSyncMatcher({
  kind: 'regex',
  pattern:
    '(?<![A-Za-z0-9_.!#$%&*+^`|~-])(?!(?:path|domain|expires|max-age|samesite|priority|secure|httponly|partitioned)=)[A-Za-z0-9_.!#$%&*+^`|~-]{1,128}=(?=[A-Za-z0-9%._~+/:-]{16})(?<=\\bcookie(?:\\\\?["\'])?[ \\t]*:[ \\t]*(?:\\\\?["\'])?[^\\r\\n"\']{0,2048}?)([A-Za-z0-9%._~+/:-]{16,}={0,2})(?![A-Za-z0-9%._~+/:=-])',
  flags: 'i',
  group: 1,
  reject_value: (rule.matcher as Extract<typeof rule.matcher, { kind: 'regex' }>).reject_value,
})!;

const piece = fc.constantFrom(
  'Cookie: ',
  'Set-Cookie: ',
  'cookie:',
  '"Cookie": "',
  '\\"cookie\\": \\"',
  "'",
  '"',
  'sid=',
  'Path=',
  'theme=dark',
  'x-y.z=',
  noise('c1', ALNUM, 24),
  's%3Aab12cd34ef56gh78',
  'aaaaaaaaaaaaaaaaaaaa',
  '***',
  '==',
  '; ',
  ';',
  ' ',
  '\t',
  '\n',
  '\r\n',
  '=',
  'xcookie: ',
  '[REDACTED:cookie-value]',
);

describe('secret:cookie-value', () => {
  it('finds what the rule found before stop 46 wherever that reached (2,048 characters)', () => {
    fc.assert(
      fc.property(fc.array(piece, { maxLength: 30 }), (pieces) => {
        const text = pieces.join('');
        expect(rule.match!(text)).toEqual(before(text));
      }),
      { numRuns: 2000 },
    );
  });

  it('removes a pair after more than 2,048 characters of kept pairs', async () => {
    // Before, the lookbehind to `Cookie:` stopped 2,048 characters back and the value was stored.
    const sid = noise('sid', ALNUM, 32);
    const kept = 'theme=dark; '.repeat(300);
    const r = await new Redactor({ tables }).redactText(`Cookie: ${kept}sessionid=${sid}; a=b`);
    expect(r.text).toBe(`Cookie: ${kept}sessionid=[REDACTED:cookie-value]; a=b`);
  });

  it('reads each header once: pairs outside a header stay, however many', () => {
    const sid = noise('sid', ALNUM, 32);
    const pairs = `a=b; sid=${sid}; `.repeat(1000);
    expect(rule.match!(pairs)).toEqual([]);
    expect(rule.match!(`Cookie: ${pairs}`)).toHaveLength(1000);
    expect(rule.match!(`Cookie: a=b\n${pairs}`)).toEqual([]);
  });
});
