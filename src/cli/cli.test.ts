import { readFileSync, unlinkSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { runCli } from '../test-utils/cli.js';
import { tempDir } from '../test-utils/shared.js';

const tmp = tempDir();
afterAll(() => tmp.cleanup());
let n = 0;
const fresh = () => join(tmp.dir, `c${n++}`, '.contextfold');

describe('contextfold CLI', () => {
  it('--help lists every core command', () => {
    const r = runCli(['--help']);
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
    const f = runCli([
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
      runCli([
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
    const rc = JSON.parse(runCli(['--dir', dir, '--json', 'recall', 'PostgreSQL port']).stdout);
    expect(rc.candidates[0]).toEqual({
      step_id: 37,
      status: 'latest_chronological',
      coverage: 2,
      score: 6,
      summary: 'PostgreSQL configured on Port 5433',
      folded_at: expect.stringMatching(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ$/),
    });
    const h = JSON.parse(runCli(['--dir', dir, '--json', 'hydrate', '37']).stdout);
    expect(Object.keys(h).sort()).toEqual(
      [
        'chunk',
        'chunks',
        'content',
        'encoding',
        'payload_sha256',
        'step_id',
        'tokens',
        'truncated',
        'verified',
      ].sort(),
    );
    expect(h.content).toBe(readFileSync(payload, 'utf8'));
    const raw = runCli(['--dir', dir, 'hydrate', '37', '--raw']);
    expect(raw.stdoutBytes.equals(readFileSync(payload))).toBe(true);
    expect(JSON.parse(runCli(['--dir', dir, '--json', 'evict', '37']).stdout)).toMatchObject({
      step_id: 37,
    });
    const v = JSON.parse(runCli(['--dir', dir, '--json', 'validate']).stdout);
    expect(v).toEqual({ ok: true, checked: 1, sanitized: 0, problems: [] });
  });

  it('fold reads the payload from stdin with --file -', () => {
    const dir = fresh();
    const bytes = Buffer.from([0x00, 0xff, 0x0d, 0x0a]);
    expect(
      runCli(['--dir', dir, 'fold', '1', 'binary', '--file', '-'], { input: bytes }).code,
    ).toBe(0);
    expect(runCli(['--dir', dir, 'hydrate', '1', '--raw']).stdoutBytes.equals(bytes)).toBe(true);
  });

  it('fold --jsonl folds a batch and names the bad line otherwise, writing nothing', () => {
    const dir = fresh();
    const good = join(tmp.dir, 'good.jsonl');
    writeFileSync(
      good,
      '{"step_id":1,"summary":"a","content":"alpha"}\n{"step_id":2,"raw_content":"beta line\\nmore"}\n',
    );
    const r = runCli(['--dir', dir, '--json', 'fold', '--jsonl', good]);
    expect(r.code).toBe(0);
    expect(JSON.parse(r.stdout)).toMatchObject({ folded: 2, already_folded: 0 });
    const bad = join(tmp.dir, 'bad.jsonl');
    writeFileSync(bad, '{"step_id":3,"content":"x"}\n{"step_id":"four"}\n');
    const dir2 = fresh();
    const b = runCli(['--dir', dir2, 'fold', '--jsonl', bad]);
    expect(b.code).toBe(1);
    expect(b.stderr).toMatch(/bad\.jsonl:2: step_id must be a non-negative integer/);
    expect(b.stderr.split('\n').filter(Boolean)).toHaveLength(1);
    expect(runCli(['--dir', dir2, '--json', 'status']).stdout).toContain('"nodes":0');
  });

  it('exit codes follow the reference: 2 not found, 3 integrity, 4 orphan, 5 broken, 1 validate', () => {
    const dir = fresh();
    runCli(['--dir', dir, 'fold', '1', 'one']);
    runCli(['--dir', dir, 'fold', '2', 'two']);
    const nf = runCli(['--dir', dir, 'hydrate', '9']);
    expect(nf.code).toBe(2);
    expect(nf.stderr).toMatch(/^contextfold: NodeNotFoundError: /);
    expect(nf.stderr).not.toMatch(/\n\s+at /);
    const p1 = join(dir, 'cold_nodes', 'step_000001.json');
    writeFileSync(p1, readFileSync(p1, 'utf8').replace('"one"', '"0ne"'));
    expect(runCli(['--dir', dir, 'hydrate', '1']).code).toBe(3);
    const j = runCli(['--dir', dir, '--json', 'hydrate', '1']);
    expect(JSON.parse(j.stdout)).toMatchObject({
      error: 'IntegrityCheckError',
      code: 'INTEGRITY_CHECK',
      path: p1,
    });
    writeFileSync(join(dir, 'cold_nodes', 'step_000003.json'), '{}');
    expect(runCli(['--dir', dir, 'hydrate', '3']).code).toBe(4);
    unlinkSync(join(dir, 'cold_nodes', 'step_000002.json'));
    expect(runCli(['--dir', dir, 'hydrate', '2']).code).toBe(5);
    const v = runCli(['--dir', dir, 'validate']);
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
      const r = runCli(['--dir', dir, ...args]);
      expect(r.code, args.join(' ')).toBe(1);
      expect(r.stderr, args.join(' ')).not.toMatch(/\n\s+at /);
    }
  });

  it('demo runs the scenario and pages in 342, 137, 447', () => {
    const r = runCli(['--json', 'demo']);
    expect(r.code).toBe(0);
    const report = JSON.parse(r.stdout);
    expect(report.page_in.pages.map((p: { step_id: number }) => p.step_id)).toEqual([
      342, 137, 447,
    ]);
    expect(report.evictions_recorded).toBe(3);
    expect(report.next_pages).toEqual([]);
    expect(report.prompt_tokens.next_turn).toBeLessThan(report.prompt_tokens.with_pages);
    expect(report.tamper.refused).toBe(true);
    expect(report.validate.ok).toBe(false);
    expect(report.folded).toBe(500);
  });
});
