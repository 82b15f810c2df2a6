import { mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { FAST_TMP } from '../../conformance/test-utils/fixtures.js';
import { runAdapterAcceptance } from '../runner.js';
import { HookSubject } from './hook-subject.js';

/** Pids of running hook servers started for a case under `dir` (Linux: read from /proc). */
function hookServersUnder(dir: string): number[] {
  const out: number[] = [];
  for (const name of readdirSync('/proc').filter((n) => /^\d+$/.test(n))) {
    try {
      if (
        readFileSync(`/proc/${name}/cmdline`, 'utf8').split('\0')[0] !== 'contextfold-hook-server'
      )
        continue;
      const env = readFileSync(`/proc/${name}/environ`, 'utf8').split('\0');
      if (env.some((e) => e.startsWith(`CONTEXTFOLD_CACHE_DIR=${dir}/`))) out.push(Number(name));
    } catch {
      // Gone meanwhile, or not ours to read.
    }
  }
  return out;
}

describe.runIf(process.platform === 'linux')('the Claude Code hook subject', () => {
  it('leaves no hook server running after its cases: the server lives in the case directory', async () => {
    // Short: the socket path under a case directory must fit in a Unix socket's 107 bytes.
    const tmp = mkdtempSync(join(FAST_TMP, 'cf-hs-'));
    // The test run turns the hook server off; this case runs the hook as users do.
    const subject = new HookSubject({ env: { CONTEXTFOLD_HOOK_SERVER: '1' } });
    try {
      const report = await runAdapterAcceptance({
        subjects: [subject],
        cases: ['tamper--truncated-node-refused'],
        tmpDir: tmp,
      });
      expect(report.adapters[0]!.cases.map((c) => c.verdict)).toEqual(['pass']);
      // A server checks its socket every 2 s; under the caller's TMPDIR it stayed up 10 minutes.
      const until = Date.now() + 20_000;
      while (hookServersUnder(tmp).length > 0 && Date.now() < until)
        await new Promise((r) => setTimeout(r, 200));
      expect(hookServersUnder(tmp)).toEqual([]);
    } finally {
      rmSync(tmp, { recursive: true, force: true });
    }
  }, 90_000);
});
