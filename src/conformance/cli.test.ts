import { execFileSync, spawnSync } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { buildDeclaration, validateDeclaration } from './declaration.js';
import { spawnSubject } from './process-subject.js';
import { runConformance } from './runner.js';
import { FAST_TMP } from './test-utils/fixtures.js';
import { publishedDeclarations } from './test-utils/published.js';

const ROOT = fileURLToPath(new URL('../../', import.meta.url));
const BIN = `${ROOT}dist/cli/bin.js`;
const SUBJECT = `"${process.execPath}" "${BIN}" subject`;

describe('the CLI subject as a separate process (node dist/cli/bin.js subject)', () => {
  it('passes every case of the corpus with the same declaration as the library in-process', async () => {
    const subject = spawnSubject({ command: SUBJECT, cwd: ROOT });
    const report = await runConformance({ subject, tmpDir: FAST_TMP });
    await subject.close();
    expect(
      report.cases.filter((c) => c.verdict !== 'pass').map((c) => `${c.case_id}: ${c.reason}`),
    ).toEqual([]);
    const decl = buildDeclaration(report);
    expect(validateDeclaration(decl)).toEqual([]);
    for (const [file, shown] of publishedDeclarations()) expect(shown, file).toEqual(decl);
  });

  it('answers malformed lines with a UsageError line and keeps serving', () => {
    const out = execFileSync(process.execPath, [BIN, 'subject'], {
      input:
        'not json\n{"id":7,"op":"hello","protocol":"ipcf-subject/1"}\n{"id":8,"op":"teleport"}\n',
      encoding: 'utf8',
    });
    const lines = out
      .trim()
      .split('\n')
      .map((l) => JSON.parse(l));
    expect(lines[0]).toMatchObject({ id: null, ok: false, error: { name: 'UsageError' } });
    expect(lines[1]).toMatchObject({
      id: 7,
      ok: true,
      result: { runtime: { name: 'contextfold' } },
    });
    expect(lines[2]).toMatchObject({ id: 8, ok: false, error: { name: 'UnsupportedOperation' } });
  });
});

describe('contextfold conformance', () => {
  it('--json prints one valid declaration for a --subject process and exits 0', () => {
    const r = spawnSync(
      process.execPath,
      [BIN, 'conformance', '--json', '--profile', 'harness', '--subject', SUBJECT],
      {
        cwd: ROOT,
        encoding: 'utf8',
        env: { ...process.env, TMPDIR: FAST_TMP },
      },
    );
    expect(r.stderr).toBe('');
    expect(r.status).toBe(0);
    expect(r.stdout.trim().split('\n')).toHaveLength(1);
    const decl = JSON.parse(r.stdout);
    expect(validateDeclaration(decl)).toEqual([]);
    expect(decl).toMatchObject({
      profile: 'harness',
      counts: { fail: 0, error: 0, not_applicable: 0 },
    });
    expect(decl.counts.pass).toBe(decl.counts.total);
  });

  it('prints a table listing every case, then the counts', () => {
    const r = spawnSync(process.execPath, [BIN, 'conformance', '--profile', 'harness'], {
      cwd: ROOT,
      encoding: 'utf8',
      env: { ...process.env, TMPDIR: FAST_TMP },
    });
    expect(r.status).toBe(0);
    const lines = r.stdout.split('\n');
    expect(lines[0]).toMatch(/^VERDICT\s+CLASS\s+CASE\s+REASON$/);
    expect(r.stdout).toMatch(/^pass\s+safety\s+conf-07--rapid-fire-recalls-turns-100-105$/m);
    expect(r.stdout).toMatch(/pass \d+ · fail 0 · not-applicable 0 · error 0 · total \d+/);
  });

  it('rejects an unknown profile with one line and exit 1', () => {
    const r = spawnSync(process.execPath, [BIN, 'conformance', '--profile', 'nope'], {
      cwd: ROOT,
      encoding: 'utf8',
    });
    expect(r.status).toBe(1);
    expect(r.stdout).toBe('');
    expect(r.stderr.trim().split('\n')).toHaveLength(1);
    expect(r.stderr).toMatch(/unknown profile "nope": use one of full, store, harness, safety/);
  });
});
