import { lintSource } from '@secretlint/core';
import { rules as recommendedRules } from '@secretlint/secretlint-rule-preset-recommend';
import fc from 'fast-check';
import { describe, expect, it, vi } from 'vitest';
import { noise } from '../test-utils/fake-secrets.js';
import { locate, SecretlintRunner } from './secretlint-runner.js';
import { loadGuardTables } from './tables.js';

/** The messages of every `lintSource` call the runner makes. */
const seen: number[] = [];
vi.mock('@secretlint/core', async (importOriginal) => {
  const real = await importOriginal<typeof import('@secretlint/core')>();
  return {
    ...real,
    lintSource: async (...args: Parameters<typeof real.lintSource>) => {
      const result = await real.lintSource(...args);
      seen.push(result.messages.length);
      return result;
    },
  };
});

type SecretlintMatcher = ConstructorParameters<typeof SecretlintRunner>[0][number];
const matchers = loadGuardTables()
  .patterns.map((p) => p.matcher)
  .filter((m): m is SecretlintMatcher => m.kind === 'secretlint');
const all = matchers.map((_, i) => i);
const runner = new SecretlintRunner(matchers);

/** What the runner found before stop 46: `lintSource`'s own messages, mapped the same way. */
async function viaLintSource(text: string) {
  const bom = text.charCodeAt(0) === 0xfeff ? 1 : 0;
  const content = bom ? text.slice(1) : text;
  const ids = [...new Set(matchers.map((m) => m.rule))];
  const rules = ids.map((id) => ({
    id,
    rule: recommendedRules.find((r) => r.meta.id === id)!,
    options: Object.assign({}, ...matchers.filter((m) => m.rule === id).map((m) => m.options)),
  }));
  const source = { content, ext: '.txt', contentType: 'text' } as Parameters<
    typeof lintSource
  >[0]['source'];
  const result = await lintSource({
    source,
    options: { config: { rules }, locale: 'en', noPhysicFilePath: true },
  });
  const hits: { start: number; end: number; pattern: number }[] = [];
  for (const msg of result.messages) {
    const pattern = matchers.findIndex(
      (m) => m.rule === msg.ruleId && m.message_id === msg.messageId,
    );
    if (pattern < 0) continue;
    const data = msg.data as Record<string, unknown> | undefined;
    const span = locate(content, msg.range, data?.[matchers[pattern]!.value]);
    if (span) hits.push({ start: span.start + bom, end: span.end + bom, pattern });
  }
  return hits.sort((a, b) => a.start - b.start || a.end - b.end || a.pattern - b.pattern);
}

const ALNUM = 'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789';
const j = (...parts: string[]) => parts.join('');
/** base64 of a JSON object, the shape the 1Password rule accepts (`ey…fQ`). */
const opsValue = Buffer.from(JSON.stringify({ secretKey: noise('ops', ALNUM, 95) })).toString(
  'base64',
);

// Token shapes of every rule the table runs through secretlint, and pieces that glue them
// together or cut them (assembled at run time: no secret-shaped literal in the repository).
const piece = fc.constantFrom(
  j('AK', 'IA', noise('aws', 'ABCDEFGHIJKLMNOPQRSTUVWXYZ234567', 16)),
  j('AK', 'IA', 'IOSFODNN7', 'EXAMPLE'),
  'account_id=1234-5678-9012',
  j('gh', 'p_', noise('gh', ALNUM, 36)),
  j('github', '_pat_', noise('ghf', ALNUM, 82)),
  j('np', 'm_', noise('npm', ALNUM, 36)),
  j('https://', noise('xo', ALNUM, 40), ':x-oauth-basic@github.com/'),
  j('S', 'G.', noise('sg1', ALNUM, 22), '.', noise('sg2', ALNUM, 43)),
  j('shp', 'at_', noise('shop', ALNUM, 32)),
  j('sk-ant-', 'api03-', noise('ant', ALNUM, 93), 'AA'),
  j('lin_', 'api_', noise('lin', ALNUM, 32)),
  j('op', 's_', opsValue),
  'https://',
  ':x-oauth-basic@github.com/',
  'AKIA',
  'x',
  '_',
  '-',
  '.',
  ' ',
  '\n',
  '\r\n',
  '"',
  '\uFEFF',
);

describe('SecretlintRunner', () => {
  it('finds exactly what lintSource’s own messages gave, on generated texts', async () => {
    let found = 0;
    await fc.assert(
      fc.asyncProperty(fc.array(piece, { maxLength: 16 }), async (pieces) => {
        const text = pieces.join('');
        const expected = await viaLintSource(text);
        if (expected.length > 0) found++;
        expect(await runner.run(text, all)).toEqual(expected);
      }),
      { numRuns: 300 },
    );
    expect(found).toBeGreaterThan(100);
  });

  it('takes the rules’ reports itself: none reaches lintSource’s clean-up, which is quadratic', async () => {
    // lintSource compares every message with every later one to drop duplicates: 256 KB of AWS
    // key ids (12,000 reports) took 95 s, 1 MB did not end. The runner collects the reports.
    const key = j('AK', 'IA', noise('aws', 'ABCDEFGHIJKLMNOPQRSTUVWXYZ234567', 16));
    const text = `${key} `.repeat(2000);
    seen.length = 0;
    const hits = await runner.run(text, all);
    expect(hits).toHaveLength(2000);
    expect(seen).toEqual([0]);
  });
});
