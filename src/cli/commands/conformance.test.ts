import { spawnSync } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { validateAdapterDeclaration } from '../../acceptance/declaration.js';
import { FAST_TMP } from '../../conformance/test-utils/fixtures.js';

const ROOT = fileURLToPath(new URL('../../../', import.meta.url));
const BIN = `${ROOT}dist/cli/bin.js`;

const run = (...args: string[]) =>
  spawnSync(process.execPath, [BIN, 'conformance', ...args], {
    cwd: ROOT,
    encoding: 'utf8',
    env: { ...process.env, TMPDIR: FAST_TMP },
  });

const CASES = 'page-in--names-archived-identifier,tamper--edited-payload-refused';

describe('contextfold conformance --adapters', () => {
  it('--json prints one valid declaration and exits 0 when every case passes', () => {
    const r = run('--adapters', '--adapter', 'session', '--cases', CASES, '--json');
    expect(r.stderr).toBe('');
    expect(r.status).toBe(0);
    expect(r.stdout.trim().split('\n')).toHaveLength(1);
    const decl = JSON.parse(r.stdout);
    expect(validateAdapterDeclaration(decl)).toEqual([]);
    expect(decl.adapters).toHaveLength(1);
    expect(decl.adapters[0]).toMatchObject({
      adapter: 'session',
      counts: { pass: 2, fail: 0, not_applicable: 0, error: 0, total: 2 },
      non_passing: [],
    });
  });

  it('prints the adapters’ table, with the suite and the anchors it could not check', () => {
    const r = run('--adapters', '--adapter', 'session', '--cases', CASES);
    expect(r.status).toBe(0);
    const lines = r.stdout.split('\n');
    expect(lines[0]).toMatch(
      /^ADAPTER\s+PASS\s+FAIL\s+N\/A\s+ERROR\s+TOTAL\s+SAFETY\s+LIVENESS\s+STRICTNESSES$/,
    );
    expect(lines[1]).toMatch(/^session\s+2\s+0\s+0\s+0\s+2\s+1\/1\s+1\/1\s+-$/);
    expect(r.stdout).toMatch(/^suite contextfold-adapter-acceptance \d+\.\d+\.\d+ /m);
    expect(r.stdout).toMatch(/^source anchors: \d+ hold, 0 broken, \d+ unchecked/m);
  });

  it('refuses bad input with one line and exit 1', () => {
    const unknown = run('--adapters', '--adapter', 'telegraph');
    expect(unknown.status).toBe(1);
    expect(unknown.stderr.trim().split('\n')).toHaveLength(1);
    expect(unknown.stderr).toContain("unknown adapter 'telegraph'");
    const alone = run('--adapter', 'session');
    expect(alone.status).toBe(1);
    expect(alone.stderr).toContain('--adapter needs --adapters');
    const both = run('--adapters', '--subject', 'x');
    expect(both.status).toBe(1);
    const json = run('--adapters', '--cases', 'no-such-case', '--json');
    expect(json.status).toBe(1);
    expect(JSON.parse(json.stdout)).toMatchObject({ error: 'UsageError' });
  });
});
