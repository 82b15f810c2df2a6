import {
  existsSync,
  mkdirSync,
  readdirSync,
  readFileSync,
  rmSync,
  unlinkSync,
  writeFileSync,
} from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { afterAll, describe, expect, it, onTestFinished } from 'vitest';
import { runCliProcess } from '../test-utils/cli.js';
import { tempDir } from '../test-utils/temp-dir.js';

const tmp = tempDir();
afterAll(() => tmp.cleanup());
let n = 0;
const fresh = () => join(tmp.dir, `c${n++}`, '.contextfold');

describe('contextfold CLI', () => {
  it('--help lists every core command', () => {
    const r = runCliProcess(['--help']);
    expect(r.code).toBe(0);
    for (const c of [
      'fold',
      'scan',
      'recall',
      'hydrate',
      'evict',
      'status',
      'validate',
      'compact',
      'repair',
      'demo',
    ]) {
      expect(r.stdout).toContain(c);
    }
  });

  it('fold → scan → recall → hydrate → evict with --json shapes', () => {
    const dir = fresh();
    const payload = join(tmp.dir, 'turn.log');
    writeFileSync(
      payload,
      '$ docker compose up -d postgres\r\nPostgreSQL running on port 5433\r\n',
    );
    const f = runCliProcess([
      '--dir',
      dir,
      '--json',
      'fold',
      '37',
      'PostgreSQL configured on Port 5433',
      '--file',
      payload,
    ]);
    expect(f.code).toBe(0);
    expect(JSON.parse(f.stdout)).toMatchObject({
      step_id: 37,
      file_path: '.contextfold/cold_nodes/step_000037.json',
    });
    const s = JSON.parse(
      runCliProcess([
        '--dir',
        dir,
        '--json',
        '--retrieval',
        'reference',
        'scan',
        'Which port for PostgreSQL?',
      ]).stdout,
    );
    expect(Object.keys(s).sort()).toEqual(['budget_dropped', 'query_terms', 'selected']);
    expect(s.selected).toEqual([
      { step_id: 37, matched_terms: ['port', 'postgresql'], cost: expect.any(Number) },
    ]);
    const rc = JSON.parse(
      runCliProcess(['--dir', dir, '--json', 'recall', 'PostgreSQL port']).stdout,
    );
    expect(rc.candidates[0]).toEqual({
      step_id: 37,
      status: 'latest_chronological',
      coverage: 2,
      score: 6,
      summary: 'PostgreSQL configured on Port 5433',
      folded_at: expect.stringMatching(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ$/),
    });
    const h = JSON.parse(runCliProcess(['--dir', dir, '--json', 'hydrate', '37']).stdout);
    expect(Object.keys(h).sort()).toEqual(
      [
        'chunk',
        'chunks',
        'content',
        'encoding',
        'findings',
        'payload_sha256',
        'step_id',
        'tokens',
        'truncated',
        'verified',
      ].sort(),
    );
    expect(h.content).toBe(readFileSync(payload, 'utf8'));
    expect(h.findings).toEqual([]);
    const raw = runCliProcess(['--dir', dir, 'hydrate', '37', '--raw']);
    expect(raw.stdoutBytes.equals(readFileSync(payload))).toBe(true);
    // --raw is the bytes alone: with --json or --chunk it is a usage error, not one ignored.
    const both = runCliProcess(['--dir', dir, '--json', 'hydrate', '37', '--raw']);
    expect(both.code).toBe(1);
    expect(JSON.parse(both.stdout)).toMatchObject({
      code: 'USAGE',
      message: 'give --raw or --json, not both (--json has the text as "content")',
    });
    expect(runCliProcess(['--dir', dir, 'hydrate', '37', '--raw', '--chunk', '1'])).toMatchObject({
      code: 1,
      stdout: '',
      stderr: 'contextfold: UsageError: --raw writes the whole payload: leave out --chunk\n',
    });
    expect(JSON.parse(runCliProcess(['--dir', dir, '--json', 'evict', '37']).stdout)).toMatchObject(
      {
        step_id: 37,
      },
    );
    const v = JSON.parse(runCliProcess(['--dir', dir, '--json', 'validate']).stdout);
    expect(v).toEqual({ ok: true, checked: 1, sanitized: 1, problems: [], warnings: [] });
    // A warning said while validating is in the JSON too, not only on stderr.
    const index = readdirSync(dir).find((n) => /^index-.*\.sqlite$/.test(n))!;
    writeFileSync(join(dir, index), 'not a database');
    const rebuilt = runCliProcess(['--dir', dir, '--json', 'validate']);
    expect(rebuilt.code).toBe(0);
    const w = JSON.parse(rebuilt.stdout);
    expect(w).toMatchObject({ ok: true, problems: [] });
    expect(w.warnings).toEqual([
      { code: 'INDEX_REBUILT', path: expect.stringContaining(dir), message: expect.any(String) },
    ]);
    expect(rebuilt.stderr).toContain(`contextfold: warning: ${w.warnings[0].message}`);
  });

  it('fold reads the payload from stdin with --file -', () => {
    const dir = fresh();
    const bytes = Buffer.from([0x00, 0xff, 0x0d, 0x0a]);
    expect(
      runCliProcess(['--dir', dir, 'fold', '1', 'binary', '--file', '-'], { input: bytes }).code,
    ).toBe(0);
    expect(runCliProcess(['--dir', dir, 'hydrate', '1', '--raw']).stdoutBytes.equals(bytes)).toBe(
      true,
    );
  });

  it('fold --jsonl folds a batch and names the bad line otherwise, writing nothing', () => {
    const dir = fresh();
    const good = join(tmp.dir, 'good.jsonl');
    writeFileSync(
      good,
      '{"step_id":1,"summary":"a","content":"alpha"}\n{"step_id":2,"raw_content":"beta line\\nmore"}\n',
    );
    const r = runCliProcess(['--dir', dir, '--json', 'fold', '--jsonl', good]);
    expect(r.code).toBe(0);
    expect(JSON.parse(r.stdout)).toMatchObject({ folded: 2, already_folded: 0 });
    const bad = join(tmp.dir, 'bad.jsonl');
    writeFileSync(bad, '{"step_id":3,"content":"x"}\n{"step_id":"four"}\n');
    const dir2 = fresh();
    const b = runCliProcess(['--dir', dir2, 'fold', '--jsonl', bad]);
    expect(b.code).toBe(1);
    expect(b.stderr).toMatch(/bad\.jsonl:2: "step_id" must be a non-negative integer/);
    expect(b.stderr.split('\n').filter(Boolean)).toHaveLength(1);
    // Nothing was written: there is still no store.
    expect(existsSync(dir2)).toBe(false);
    expect(runCliProcess(['--dir', dir2, '--json', 'status']).stdout).toContain(
      '"STORE_NOT_FOUND"',
    );
  });

  it('exit codes follow the reference: 2 not found, 3 integrity, 4 orphan, 5 broken, 1 validate', () => {
    const dir = fresh();
    runCliProcess(['--dir', dir, 'fold', '1', 'one']);
    runCliProcess(['--dir', dir, 'fold', '2', 'two']);
    const nf = runCliProcess(['--dir', dir, 'hydrate', '9']);
    expect(nf.code).toBe(2);
    expect(nf.stderr).toMatch(/^contextfold: NodeNotFoundError: /);
    expect(nf.stderr).not.toMatch(/\n\s+at /);
    const p1 = join(dir, 'cold_nodes', 'step_000001.json');
    writeFileSync(p1, readFileSync(p1, 'utf8').replace('"one"', '"0ne"'));
    expect(runCliProcess(['--dir', dir, 'hydrate', '1']).code).toBe(3);
    const j = runCliProcess(['--dir', dir, '--json', 'hydrate', '1']);
    expect(JSON.parse(j.stdout)).toMatchObject({
      error: 'IntegrityCheckError',
      code: 'INTEGRITY_CHECK',
      path: p1,
    });
    writeFileSync(join(dir, 'cold_nodes', 'step_000003.json'), '{}');
    expect(runCliProcess(['--dir', dir, 'hydrate', '3']).code).toBe(4);
    unlinkSync(join(dir, 'cold_nodes', 'step_000002.json'));
    expect(runCliProcess(['--dir', dir, 'hydrate', '2']).code).toBe(5);
    const v = runCliProcess(['--dir', dir, 'validate']);
    expect(v.code).toBe(1);
    expect(v.stdout).toMatch(/3 problem/);
  });

  it('bad arguments: one line, exit 1, no stack trace', () => {
    const dir = fresh();
    for (const args of [
      ['hydrate', 'abc'],
      ['fold', '1'],
      ['--tokenizer', 'gpt2', 'status'],
      ['nosuch'],
    ]) {
      const r = runCliProcess(['--dir', dir, ...args]);
      expect(r.code, args.join(' ')).toBe(1);
      expect(r.stderr, args.join(' ')).not.toMatch(/\n\s+at /);
    }
  });

  it("a newcomer's first commands: wrong --dir, a piped prompt, a typo with --json", () => {
    const cwd = join(tmp.dir, 'newcomer');
    mkdirSync(cwd);
    const wrong = runCliProcess(['--dir', '/nonexistent', 'validate'], { cwd });
    expect(wrong.code).toBe(1);
    expect(wrong.stdout).toBe('');
    expect(wrong.stderr.split('\n').filter(Boolean)).toHaveLength(1);
    runCliProcess(['fold', '--jsonl', '-'], {
      cwd,
      input:
        '{"step_id":1,"summary":"PostgreSQL on port 5433"}\n{"step_id":2,"summary":"lint clean"}\n{"step_id":3,"summary":"docs built"}\n',
    });
    const piped = runCliProcess(['scan', '-', '--json'], { cwd, input: 'postgres port?\n' });
    expect(piped.code).toBe(0);
    expect(JSON.parse(piped.stdout).selected[0].step_id).toBe(1);
    const typo = runCliProcess(['--json', 'frob'], { cwd });
    expect(typo.code).toBe(1);
    expect(typo.stderr).toBe('');
    expect(JSON.parse(typo.stdout)).toMatchObject({ error: 'UsageError', code: 'USAGE' });
  });

  it('demo shows raw history vs prompt tokens, in the default mode, and prints no deleted path', () => {
    const r = runCliProcess(['demo']);
    expect(r.code).toBe(0);
    expect(r.stdout).toMatch(/retrieval ranked/);
    expect(r.stdout).toMatch(
      /Without folding, every prompt carries the raw history: [\d,]+ tokens\./,
    );
    expect(r.stdout).toMatch(
      /this prompt with folding: \d+ tokens \(question \d+ \+ pages \d+\); without: [\d,]+/,
    );
    expect(r.stdout).toMatch(
      /step 342 latest_chronological, \d+ tokens, sha256 [0-9a-f]{12}… verified/,
    );
    expect(r.stdout).toContain('(tampered): .contextfold/cold_nodes/step_000091.json');
    expect(r.stdout).not.toContain(tmpdir());
    const json = JSON.parse(runCliProcess(['--json', 'demo']).stdout);
    expect(json).toMatchObject({ retrieval: 'ranked', folded: 500, dir: null });
    expect(JSON.stringify(json)).not.toContain(tmpdir());
  });

  it('demo --keep keeps the store it names', () => {
    const r = runCliProcess(['demo', '--keep']);
    const kept = /store kept at (.+)\n/.exec(r.stdout)?.[1];
    expect(kept).toBeDefined();
    onTestFinished(() => rmSync(dirname(kept!), { recursive: true, force: true }));
    expect(existsSync(join(kept!, 'cold_nodes', 'step_000499.json'))).toBe(true);
  });
});
