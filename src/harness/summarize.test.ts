import { readFileSync } from 'node:fs';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { itShared, sharedPath } from '../test-utils/shared.js';
import { describeTurn, MAX_SUMMARY_CHARS, summarizeTurn } from './summarize.js';

const cps = (s: string): number => Array.from(s).length;

describe('describeTurn', () => {
  it('extracts files, commands, errors and exit status from tool calls and output', () => {
    const f = describeTurn([
      {
        role: 'assistant',
        content: 'Running the failing suite.',
        toolCalls: [
          { name: 'bash', input: { command: 'npm test -- src/db/pool.test.ts\n--verbose' } },
        ],
      },
      {
        role: 'tool',
        content:
          'FAIL src/db/pool.test.ts\nTypeError: pool is undefined\n    at connect (src/db/pool.ts:12:3)\n1 failed',
        exitCode: 1,
      },
    ]);
    expect(f.commands).toEqual(['npm test -- src/db/pool.test.ts']);
    expect(f.files).toEqual(['src/db/pool.test.ts', 'src/db/pool.ts']);
    expect(f.errors).toEqual(['TypeError', '1 failed']);
    expect(f.exit_status).toBe(1);
    expect(f.status).toBe('FAILED');
    expect(f.action_type).toBe('VERIFICATION');
    expect(f.first_line).toBe('Running the failing suite.');
    expect(f.summary).toBe(
      'assistant (1 tool call): Running the failing suite. | exit 1 | errors: TypeError, 1 failed | ran: npm test -- src/db/pool.test.ts | files: db/pool.test.ts, db/pool.ts',
    );
  });

  it('reads exit codes written in text and tells partial from full failure', () => {
    const partial = describeTurn([
      {
        role: 'assistant',
        content: '',
        toolCalls: [
          { name: 'bash', input: {} },
          { name: 'bash', input: {} },
        ],
      },
      { role: 'tool', content: 'ok', exitCode: 0 },
      { role: 'tool', content: 'Process exited with code 2' },
    ]);
    expect(partial.exit_status).toBe(2);
    expect(partial.status).toBe('PARTIAL');
    const blocked = describeTurn([
      { role: 'assistant', content: 'x', toolCalls: [{ name: 'bash', input: {} }] },
    ]);
    expect(blocked.status).toBe('BLOCKED');
    expect(describeTurn({ role: 'tool', content: 'boom', isError: true }).status).toBe('FAILED');
    expect(describeTurn({ role: 'user', content: 'Why does TypeError happen?' }).status).toBe(
      'SUCCESS',
    );
  });

  it('classifies the action', () => {
    const kind = (m: Parameters<typeof describeTurn>[0]) => describeTurn(m).action_type;
    expect(
      kind({
        role: 'assistant',
        content: 'x',
        toolCalls: [{ name: 'edit_file', input: { path: 'a.ts' } }],
      }),
    ).toBe('CODE_MODIFICATION');
    expect(
      kind({
        role: 'assistant',
        content: 'Refactor the pool',
        toolCalls: [{ name: 'Edit', input: {} }],
      }),
    ).toBe('REFACTOR');
    expect(
      kind({
        role: 'assistant',
        content: '',
        toolCalls: [{ name: 'bash', input: { command: 'git status' } }],
      }),
    ).toBe('COMMAND_EXECUTION');
    expect(
      kind({
        role: 'assistant',
        content: '',
        toolCalls: [{ name: 'Read', input: { file_path: 'a.ts' } }],
      }),
    ).toBe('EXPLORATION');
    expect(kind({ role: 'user', content: 'hello' })).toBe('OTHER');
  });

  it('skips markers, JSON fragments and glyphs for the first meaningful line', () => {
    const f = describeTurn({
      role: 'assistant',
      content: '\n\n[thinking]\n```\n{\n "command": "bd ready"\n}\n⏺ Let me check the ready tasks.',
    });
    expect(f.first_line).toBe('Let me check the ready tasks.');
    expect(f.commands).toEqual(['bd ready']);
  });

  it('does not take URLs or version numbers for files', () => {
    const f = describeTurn({
      role: 'tool',
      content: 'see https://example.com/a/b.html and v1.2.3, edit lib/app.ex',
    });
    expect(f.files).toEqual(['lib/app.ex']);
  });
});

describe('summarizeTurn', () => {
  it('never exceeds 280 code points, for any input, and is deterministic', () => {
    fc.assert(
      fc.property(
        fc.array(
          fc.record({
            role: fc.constantFrom('user', 'assistant', 'tool'),
            content: fc.string({ unit: 'grapheme', maxLength: 2000 }),
          }),
          { minLength: 1, maxLength: 4 },
        ),
        (msgs) => {
          const s = summarizeTurn(msgs);
          expect(cps(s)).toBeLessThanOrEqual(MAX_SUMMARY_CHARS);
          expect(summarizeTurn(msgs)).toBe(s);
        },
      ),
      { numRuns: 200 },
    );
  });

  it('cuts long summaries at a word boundary within 280 code points, never inside a word', () => {
    // A word cut in two could be part of a secret the redactor no longer recognises.
    const s = summarizeTurn({ role: 'user', content: `${'😀 '.repeat(150)}fix src/a.ts` });
    expect(s).toBe(`user: ${'😀 '.repeat(59)}😀… | files: src/a.ts`);
    expect(summarizeTurn({ role: 'user', content: `${'😀'.repeat(300)} fix src/a.ts` })).toBe(
      'user: … | files: src/a.ts',
    );
    const long = `src/${'d'.repeat(90)}/${'e'.repeat(90)}.ts`;
    const t = summarizeTurn({
      role: 'user',
      content: `${'😀'.repeat(50)} ${long} ${long.replace('src', 'lib')}`,
    });
    expect(cps(t)).toBeLessThanOrEqual(MAX_SUMMARY_CHARS);
    expect(t).toBe(`user: ${'😀'.repeat(50)}… | files: ${long.slice(4)},…`);
    expect(t).not.toMatch(/[\uD800-\uDBFF](?![\uDC00-\uDFFF])/);
  });

  it('replaces lone surrogates so a record can always be serialised', () => {
    const s = summarizeTurn({ role: 'user', content: 'bad \uD800 text' });
    expect(s).toBe('user: bad \uFFFD text');
  });

  itShared('summarises real transcript lines (../shared/data) within the limit', () => {
    const files = [
      'marot_spotter_4d5611e5-241a-462a-8d15-5122611a9569.jsonl',
      'palimondo_BookMinder_day-003.jsonl',
    ];
    for (const f of files) {
      const lines = readFileSync(sharedPath('data', 'trajectories', f), 'utf8')
        .trim()
        .split('\n');
      for (const l of lines.slice(0, 60)) {
        const t = JSON.parse(l) as { role: string; content: string };
        const s = summarizeTurn(t);
        expect(cps(s)).toBeLessThanOrEqual(MAX_SUMMARY_CHARS);
        expect(s.startsWith(`${t.role}`)).toBe(true);
      }
    }
  });
});
