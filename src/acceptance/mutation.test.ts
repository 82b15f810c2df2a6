import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { FAST_TMP } from '../conformance/test-utils/fixtures.js';
import { ContextFold } from '../engine/context-fold.js';
import { type AcceptanceReport, runAdapterAcceptance } from './runner.js';
import { AiSdkSubject } from './subjects/ai-sdk-subject.js';
import { HookSubject } from './subjects/hook-subject.js';
import { McpSubject } from './subjects/mcp-subject.js';
import { ProxySubject } from './subjects/proxy-subject.js';
import { SessionSubject } from './subjects/session-subject.js';
import { type EngineMutant, installEngineMutant } from './test-utils/engine-mutants.mjs';

const PRELOAD = fileURLToPath(new URL('./test-utils/mutant-preload.mjs', import.meta.url));

/**
 * Every subject with its engine broken one way: in this process (`Session`, the middleware, the
 * proxy) by wrapping what `ContextFold.open` returns, in the CLI processes by the same wrapper
 * loaded with `--import`.
 */
async function runMutant(mutant: EngineMutant, cases: string[]): Promise<AcceptanceReport> {
  const env = { NODE_OPTIONS: `--import=${PRELOAD}`, CONTEXTFOLD_TEST_MUTANT: mutant };
  const restore = installEngineMutant(ContextFold, mutant);
  try {
    return await runAdapterAcceptance({
      subjects: [
        new SessionSubject(),
        new AiSdkSubject(),
        new McpSubject({ env }),
        new HookSubject({ env }),
        new ProxySubject('anthropic'),
        new ProxySubject('openai'),
      ],
      cases,
      tmpDir: FAST_TMP,
    });
  } finally {
    restore();
  }
}

const verdicts = (r: AcceptanceReport, adapter: string) =>
  Object.fromEntries(
    r.adapters.find((a) => a.adapter === adapter)!.cases.map((c) => [c.case_id, c.verdict]),
  );

const PROXIES = ['proxy-anthropic', 'proxy-openai'];
const ADAPTERS = ['session', 'ai-sdk-middleware', 'mcp-server', 'claude-code-hook', ...PROXIES];

describe('mutation check: the suite catches each adapter with a broken engine', () => {
  const reports = new Map<EngineMutant, AcceptanceReport>();
  beforeAll(async () => {
    reports.set(
      'verification',
      await runMutant('verification', [
        'tamper--edited-payload-refused',
        'escape--symlinked-node-refused',
      ]),
    );
    reports.set(
      'eviction',
      await runMutant('eviction', [
        'evict--next-call-carries-no-page',
        'evict--rapid-fire-pages-never-accumulate',
      ]),
    );
    reports.set(
      'isolation',
      await runMutant('isolation', ['isolation--other-sessions-identifier-not-paged']),
    );
  }, 600_000);
  afterAll(() => {
    if (process.env.PRINT)
      for (const [m, r] of reports)
        for (const a of r.adapters)
          for (const c of a.cases) console.log(m, a.adapter, c.case_id, c.verdict, c.reason);
    reports.clear();
  });

  it.each(ADAPTERS)('%s: breaking verification fails the tamper and escape cases', (adapter) => {
    expect(verdicts(reports.get('verification')!, adapter)).toEqual({
      'tamper--edited-payload-refused': 'fail',
      'escape--symlinked-node-refused': 'fail',
    });
  });

  it.each(ADAPTERS)('%s: breaking session isolation fails the other-session case', (adapter) => {
    expect(verdicts(reports.get('isolation')!, adapter)).toEqual({
      'isolation--other-sessions-identifier-not-paged': 'fail',
    });
  });

  it.each(['session', 'ai-sdk-middleware', ...PROXIES])(
    '%s: breaking eviction fails the eviction cases',
    (adapter) => {
      expect(verdicts(reports.get('eviction')!, adapter)).toEqual({
        'evict--next-call-carries-no-page': 'fail',
        'evict--rapid-fire-pages-never-accumulate': 'fail',
      });
    },
  );

  it.each(['mcp-server', 'claude-code-hook'])(
    '%s: cannot evict, so the eviction cases are not-applicable to it (never pass)',
    (adapter) => {
      expect(verdicts(reports.get('eviction')!, adapter)).toEqual({
        'evict--next-call-carries-no-page': 'not-applicable',
        'evict--rapid-fire-pages-never-accumulate': 'not-applicable',
      });
    },
  );

  it('each failure is a caught deviation, with a reason, never a run that errored', () => {
    for (const r of reports.values()) {
      for (const a of r.adapters) {
        for (const c of a.cases) {
          expect(c.verdict, `${a.adapter} ${c.case_id}: ${c.reason}`).not.toBe('error');
          if (c.verdict === 'fail') expect(c.reason).toMatch(/^call \d/);
        }
      }
    }
  });
});
