import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { SecretlintRunner } from './secretlint-runner.js';
import { loadGuardTables } from './tables.js';

const tables = loadGuardTables();
const own = (id: string) => tables.patterns.find((p) => p.id === id)!;

/** secretlint's slack rule, as the table named it before stop 45 (its two messages). */
const secretlint = new SecretlintRunner([
  {
    kind: 'secretlint',
    rule: '@secretlint/secretlint-rule-slack',
    message_id: 'SLACK_TOKEN',
    value: 'TOKEN',
  },
  {
    kind: 'secretlint',
    rule: '@secretlint/secretlint-rule-slack',
    message_id: 'IncomingWebhook',
    value: 'URL',
  },
]);

const piece = fc.constantFrom(
  'xoxb-',
  'xoxp-',
  'xapp-',
  'xoxa-',
  'xoxr-',
  'xoxe.',
  '1-',
  '42-',
  'aB3',
  'x'.repeat(41),
  '-',
  '.',
  ' ',
  '\n',
  '_',
  'https://hooks.slack.com/services/',
  'HTTPS://HOOKS.SLACK.COM/SERVICES/',
  'T0A1/',
  'B9z/',
  'tok',
);

describe('the Slack rules (own regexes since stop 45)', () => {
  it('find exactly the spans secretlint’s slack rule reports', async () => {
    // secretlint's report of each match cost a pass over the text before it: 64 KB of
    // `a.xoxp-1-` repeated took 4 s and 1 MB did not end. The own rules are its two patterns.
    await fc.assert(
      fc.asyncProperty(fc.array(piece, { maxLength: 24 }), async (pieces) => {
        const text = pieces.join('');
        const hits = await secretlint.run(text, [0, 1]);
        const spans = (i: number) =>
          hits.filter((h) => h.pattern === i).map((h) => [h.start, h.end]);
        const mine = (id: string) => own(id).match!(text).map((s) => [s.start, s.end]);
        expect(mine('secret:slack-token')).toEqual(spans(0));
        expect(mine('secret:slack-webhook')).toEqual(spans(1));
      }),
      { numRuns: 300 },
    );
  });

  it('are table regexes, not secretlint rules (whose reporting is quadratic in the matches)', () => {
    expect(own('secret:slack-token').matcher.kind).toBe('regex');
    expect(own('secret:slack-webhook').matcher.kind).toBe('regex');
  });
});
