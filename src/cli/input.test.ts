import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { beforeAll, describe, expect, it } from 'vitest';
import { runCliProcess } from '../test-utils/cli.js';
import { tempDir } from '../test-utils/temp-dir.js';

// One store with a PostgreSQL turn among unrelated ones, read by the scan and recall tests.
const shared = tempDir('cf-input-');
let root: string;
let dir: string;
beforeAll(() => {
  root = shared.dir;
  dir = join(root, '.contextfold');
  const turns = [
    {
      step_id: 37,
      summary: 'PostgreSQL on port 5433',
      content: '$ docker compose up -d postgres\nPostgreSQL running on port 5433',
    },
    { step_id: 38, summary: 'Renderer lint clean', content: '0 problems' },
    { step_id: 39, summary: 'Parser tests pass', content: '42 tests passed' },
  ];
  const r = runCliProcess(['--dir', dir, 'fold', '--jsonl', '-'], {
    input: turns.map((t) => JSON.stringify(t)).join('\n'),
  });
  expect(r.code).toBe(0);
  return () => shared.cleanup();
});
const store = () => ({ root, dir });

const selected = (stdout: string) =>
  (JSON.parse(stdout) as { selected: { step_id: number }[] }).selected.map((p) => p.step_id);

describe('text arguments from standard input and files', () => {
  it('scan - reads the prompt from stdin (echo … | contextfold scan - --json)', () => {
    const { dir } = store();
    const r = runCliProcess(['--dir', dir, 'scan', '-', '--json'], { input: 'postgres port?\n' });
    expect(r.stderr).toBe('');
    expect(r.code).toBe(0);
    expect(selected(r.stdout)).toEqual([37]);
  });

  it('scan --prompt-file takes a prompt far over the 128 KB argument limit', () => {
    const { root, dir } = store();
    const file = join(root, 'prompt.txt');
    // 300 KB: as an argument this fails with E2BIG ("Argument list too long").
    writeFileSync(file, `Which port does PostgreSQL use? ${'filler '.repeat(43_000)}\n`);
    const r = runCliProcess(['--dir', dir, '--json', 'scan', '--prompt-file', file]);
    expect(r.code).toBe(0);
    expect(selected(r.stdout)).toEqual([37]);
    const piped = runCliProcess(['--dir', dir, '--json', 'scan', '-'], {
      input: `postgres port ${'x'.repeat(300_000)}`,
    });
    expect(selected(piped.stdout)).toEqual([37]);
  });

  it('recall - and --query-file read the query', () => {
    const { root, dir } = store();
    const viaStdin = runCliProcess(['--dir', dir, '--json', 'recall', '-'], {
      input: 'PostgreSQL port\n',
    });
    expect(JSON.parse(viaStdin.stdout)).toMatchObject({ query: 'PostgreSQL port' });
    const file = join(root, 'q.txt');
    writeFileSync(file, 'PostgreSQL port\r\n');
    const viaFile = runCliProcess(['--dir', dir, '--json', 'recall', '--query-file', file]);
    expect(JSON.parse(viaFile.stdout)).toMatchObject({
      query: 'PostgreSQL port',
      candidates: [{ step_id: 37 }],
    });
  });

  it('fold - and --summary-file read the summary; the payload can still come from --file', () => {
    const root = tempDir().dir;
    const dir = join(root, '.contextfold');
    const payload = join(root, 'p.log');
    writeFileSync(payload, 'payload bytes\n');
    const a = runCliProcess(['--dir', dir, '--json', 'fold', '1', '-', '--file', payload], {
      input: 'Summary from stdin\n',
    });
    expect(a.code).toBe(0);
    const summaryFile = join(root, 's.txt');
    writeFileSync(summaryFile, 'Summary from a file\n');
    const b = runCliProcess(
      ['--dir', dir, 'fold', '2', '--summary-file', summaryFile, '--file', '-'],
      {
        input: 'payload from stdin',
      },
    );
    expect(b.code).toBe(0);
    const rc = JSON.parse(runCliProcess(['--dir', dir, '--json', 'recall', 'summary']).stdout);
    expect(rc.candidates.map((c: { summary: string }) => c.summary).sort()).toEqual([
      'Summary from a file',
      'Summary from stdin',
    ]);
    expect(runCliProcess(['--dir', dir, 'hydrate', '2', '--raw']).stdout).toBe(
      'payload from stdin',
    );
  });

  it('conflicting or missing sources are one usage line', () => {
    const { root, dir } = store();
    const file = join(root, 'x.txt');
    writeFileSync(file, 'x');
    const bad = Buffer.from([0x70, 0x6f, 0x72, 0x74, 0xff]);
    const cases: [string[], string | Buffer | undefined, RegExp][] = [
      [
        ['scan', 'port', '--prompt-file', file],
        undefined,
        /give PROMPT or --prompt-file FILE, not both/,
      ],
      [
        ['scan'],
        undefined,
        /PROMPT is missing: give it as an argument, '-' to read standard input, or --prompt-file FILE/,
      ],
      [['recall'], undefined, /QUERY is missing/],
      [
        ['scan', '--prompt-file', join(root, 'nope.txt')],
        undefined,
        /cannot read .*nope\.txt: no such file \(ENOENT\)$/m,
      ],
      [
        ['fold', '4', 'x', '--file', join(root, 'nope.log')],
        undefined,
        /cannot read .*nope\.log: no such file \(ENOENT\)$/m,
      ],
      [
        ['fold', '4', 'x', '--file', root],
        undefined,
        /: it is a directory, not a file \(EISDIR\)$/m,
      ],
      [['fold', '--jsonl', root], undefined, /: it is a directory, not a file \(EISDIR\)$/m],
      [['guard', 'scan', root], undefined, /: it is a directory, not a file \(EISDIR\)$/m],
      [['scan', '-'], bad, /standard input is not valid UTF-8 text/],
      [
        ['fold', '3', '-', '--file', '-'],
        'x',
        /only one of SUMMARY and --file can read standard input/,
      ],
    ];
    for (const [args, input, message] of cases) {
      const r = runCliProcess(['--dir', dir, ...args], input === undefined ? {} : { input });
      expect(r.code, args.join(' ')).toBe(1);
      expect(r.stderr, args.join(' ')).toMatch(message);
      expect(r.stderr.trim().split('\n'), args.join(' ')).toHaveLength(1);
    }
  });
});
