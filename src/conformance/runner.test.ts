import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { UsageError } from '../protocol/errors.js';
import { buildDeclaration, validateDeclaration } from './declaration.js';
import { LibrarySubject } from './library-subject.js';
import { SubjectProtocolError } from './process-subject.js';
import { runConformance } from './runner.js';
import { FAST_TMP, subsetCorpus } from './test-utils/fixtures.js';
import type { SubjectRequest, SubjectResponse } from './types.js';

/** A library subject with a configurable hello and optional per-op overrides. */
class ScriptedSubject extends LibrarySubject {
  constructor(
    private readonly opts: {
      requirements?: string[];
      strictnesses?: string[];
      protocol?: string;
      runtimeName?: string;
      override?: (req: SubjectRequest) => SubjectResponse | null | 'throw';
    } = {},
  ) {
    super();
  }

  override async request(req: SubjectRequest): Promise<SubjectResponse> {
    const o = this.opts.override?.(req) ?? null;
    if (o === 'throw') throw new SubjectProtocolError(`subject died on ${req.op}`);
    if (o) return o;
    return super.request(req);
  }

  protected override async hello(): Promise<Record<string, unknown>> {
    const h = await super.hello();
    return {
      ...h,
      ...(this.opts.requirements ? { requirements: this.opts.requirements } : {}),
      ...(this.opts.strictnesses ? { strictnesses: this.opts.strictnesses } : {}),
      ...(this.opts.protocol ? { protocol: this.opts.protocol } : {}),
      ...(this.opts.runtimeName !== undefined
        ? { runtime: { name: this.opts.runtimeName, version: '1' } }
        : {}),
    };
  }
}

const isUtf8 = (b64: unknown) => {
  try {
    new TextDecoder('utf-8', { fatal: true }).decode(Buffer.from(String(b64), 'base64'));
    return true;
  } catch {
    return false;
  }
};

/** Refuses folds whose payload is not UTF-8 (and, optionally, any payload with a CR). */
function refusesNonUtf8(name: string, alsoCr = false) {
  return (req: SubjectRequest): SubjectResponse | null => {
    if (req.op !== 'fold' || typeof req.content_base64 !== 'string') return null;
    const bad =
      !isUtf8(req.content_base64) ||
      (alsoCr && Buffer.from(req.content_base64, 'base64').includes(0x0d));
    return bad ? { id: req.id, ok: false, error: { name, message: 'payload is not UTF-8' } } : null;
  };
}

const cleanups: (() => void)[] = [];
afterEach(() => {
  while (cleanups.length) cleanups.pop()!();
});

function corpus(ids: string[]): string {
  const c = subsetCorpus(ids);
  cleanups.push(c.cleanup);
  return c.dir;
}

async function run(subject: LibrarySubject, corpusDir: string, profile?: string) {
  try {
    const report = await runConformance({ subject, corpusDir, profile, tmpDir: FAST_TMP });
    const decl = buildDeclaration(report);
    expect(validateDeclaration(decl, corpusDir)).toEqual([]);
    return { report, decl, verdict: (id: string) => report.cases.find((c) => c.case_id === id)! };
  } finally {
    await subject.close();
  }
}

const INVALID = 'conf-01--invalid-utf8-payload-verbatim';
const CRLF = 'conf-01--crlf-payload-verbatim';

describe('runConformance scoring', () => {
  it('marks a case not-applicable when it needs a requirement outside the declared set, and still counts it', async () => {
    const dir = corpus(['conf-10--never-folded-step', 'conf-12--crash-a-orphaned-node']);
    const { decl, verdict } = await run(new ScriptedSubject({ requirements: ['CONF-10'] }), dir);
    expect(verdict('conf-10--never-folded-step').verdict).toBe('pass');
    expect(verdict('conf-12--crash-a-orphaned-node')).toMatchObject({
      verdict: 'not-applicable',
      reason: 'requires CONF-12, outside the declared set',
    });
    expect(decl.counts).toEqual({ pass: 1, fail: 0, not_applicable: 1, error: 0, total: 2 });
    expect(decl.declared_requirements).toEqual(['CONF-10']);
    expect(decl.non_passing).toEqual([
      {
        case_id: 'conf-12--crash-a-orphaned-node',
        verdict: 'not-applicable',
        reason: 'requires CONF-12, outside the declared set',
      },
    ]);
  });

  it('reports an altered input as error for that case alone, without running it', async () => {
    const dir = corpus(['conf-10--never-folded-step', CRLF]);
    const p = join(dir, 'cases', CRLF, 'payload.txt');
    writeFileSync(p, readFileSync(p).toString('utf8').replace(/\r\n/g, '\n'));
    const folds: unknown[] = [];
    const subject = new ScriptedSubject({
      override: (r) => (r.op === 'fold' && folds.push(r) ? null : null),
    });
    const { decl, verdict } = await run(subject, dir);
    expect(verdict(CRLF).verdict).toBe('error');
    expect(verdict(CRLF).reason).toMatch(
      /payload\.txt has \d+ bytes, expected\.json records \d+: the fixture was altered/,
    );
    expect(folds).toEqual([]);
    expect(decl.counts).toMatchObject({ pass: 1, error: 1, total: 2 });
  });

  it('fails an undeclared refusal of a liveness step and names the strictness that would excuse it', async () => {
    const dir = corpus([INVALID, CRLF]);
    const { verdict, decl } = await run(
      new ScriptedSubject({ override: refusesNonUtf8('UsageError') }),
      dir,
    );
    expect(verdict(INVALID).verdict).toBe('fail');
    expect(verdict(INVALID).reason).toMatch(
      /expected a result, got UsageError.*must declare refuses_non_utf8_payload/,
    );
    expect(decl.counts.fail).toBe(1);
  });

  it('passes a declared, demonstrated strictness and publishes where it applied', async () => {
    const dir = corpus([INVALID, CRLF]);
    const subject = new ScriptedSubject({
      strictnesses: ['refuses_non_utf8_payload'],
      override: refusesNonUtf8('UsageError'),
    });
    const { verdict, decl } = await run(subject, dir);
    expect(verdict(INVALID)).toMatchObject({
      verdict: 'pass',
      strictness: 'refuses_non_utf8_payload',
    });
    expect(verdict(CRLF).verdict).toBe('pass');
    expect(decl.declared_strictnesses).toEqual([
      { conjunct: 'refuses_non_utf8_payload', applied_in: [INVALID] },
    ]);
    expect(decl.counts).toMatchObject({ pass: 2, fail: 0 });
  });

  it('fails a declared strictness whose absence case does not pass (a blanket refusal is no strictness)', async () => {
    const dir = corpus([INVALID, CRLF]);
    const subject = new ScriptedSubject({
      strictnesses: ['refuses_non_utf8_payload'],
      override: refusesNonUtf8('UsageError', true),
    });
    const { verdict } = await run(subject, dir);
    expect(verdict(CRLF).verdict).toBe('fail');
    expect(verdict(INVALID).verdict).toBe('fail');
    expect(verdict(INVALID).reason).toMatch(
      /refuses_non_utf8_payload is undemonstrated: absence case conf-01--crlf-payload-verbatim did not pass/,
    );
  });

  it('fails a declared strictness when the absence case is not part of the run', async () => {
    const dir = corpus([INVALID]);
    const subject = new ScriptedSubject({
      strictnesses: ['refuses_non_utf8_payload'],
      override: refusesNonUtf8('UsageError'),
    });
    const { verdict } = await run(subject, dir);
    expect(verdict(INVALID).verdict).toBe('fail');
    expect(verdict(INVALID).reason).toMatch(/undemonstrated/);
  });

  it('does not excuse a refusal with an error the allowance does not list', async () => {
    const dir = corpus([INVALID, CRLF]);
    const subject = new ScriptedSubject({
      strictnesses: ['refuses_non_utf8_payload'],
      override: refusesNonUtf8('IntegrityCheckError'),
    });
    const { verdict } = await run(subject, dir);
    expect(verdict(INVALID).verdict).toBe('fail');
  });

  it('never excuses a safety case, declared strictnesses or not', async () => {
    const dir = corpus([CRLF, 'conf-10--never-folded-step']);
    const subject = new ScriptedSubject({
      strictnesses: ['refuses_non_utf8_payload'],
      override: refusesNonUtf8('UsageError', true),
    });
    const { verdict } = await run(subject, dir);
    expect(verdict(CRLF).verdict).toBe('fail');
    expect(verdict(CRLF).strictness).toBeUndefined();
  });

  it('fails a wrong label or order, and a result where an error was expected', async () => {
    const dir = corpus(['conf-04--postgres-port-5433-5434-5433', 'conf-10--never-folded-step']);
    const subject = new ScriptedSubject({
      override: (r) => {
        if (r.op === 'recall') {
          return {
            id: r.id,
            ok: true,
            result: {
              candidates: [
                { step_id: 137, status: 'latest_chronological' },
                { step_id: 37, status: 'superseded' },
              ],
            },
          };
        }
        if (r.op === 'hydrate' && r.step_id === 138) {
          return {
            id: r.id,
            ok: true,
            result: { step_id: 138, content_base64: '', payload_sha256: '', truncated: false },
          };
        }
        return null;
      },
    });
    const { verdict } = await run(subject, dir);
    expect(verdict('conf-04--postgres-port-5433-5434-5433').verdict).toBe('fail');
    expect(verdict('conf-04--postgres-port-5433-5434-5433').reason).toMatch(
      /candidates: expected 4 element/,
    );
    expect(verdict('conf-10--never-folded-step').reason).toBe(
      'step 2 (hydrate 138): expected NodeNotFoundError, got a result',
    );
  });

  it('reports a subject that breaks the protocol or lacks an operation as error, and goes on', async () => {
    const dir = corpus([
      'conf-07--evicted-back-to-baseline',
      'conf-08--inspection-injects-nothing',
      'conf-10--never-folded-step',
    ]);
    const subject = new ScriptedSubject({
      override: (r) => {
        if (r.op === 'page_in') return 'throw';
        if (r.op === 'context_tokens')
          return {
            id: r.id,
            ok: false,
            error: { name: 'UnsupportedOperation', message: 'no harness' },
          };
        return null;
      },
    });
    const { verdict, decl } = await run(subject, dir);
    expect(verdict('conf-07--evicted-back-to-baseline')).toMatchObject({ verdict: 'error' });
    expect(verdict('conf-07--evicted-back-to-baseline').reason).toMatch(
      /does not support context_tokens|died on page_in/,
    );
    expect(verdict('conf-08--inspection-injects-nothing').reason).toBe(
      'subject does not support context_tokens, which this case needs',
    );
    expect(verdict('conf-10--never-folded-step').verdict).toBe('pass');
    expect(decl.counts).toEqual({ pass: 1, fail: 0, not_applicable: 0, error: 2, total: 3 });
  });

  it('refuses a subject that speaks another protocol, and an unknown profile', async () => {
    const dir = corpus(['conf-10--never-folded-step']);
    const s1 = new ScriptedSubject({ protocol: 'ipcf-subject/0' });
    await expect(runConformance({ subject: s1, corpusDir: dir })).rejects.toThrow(
      /speaks "ipcf-subject\/0"/,
    );
    const s2 = new ScriptedSubject();
    await expect(
      runConformance({ subject: s2, corpusDir: dir, profile: 'nope' }),
    ).rejects.toBeInstanceOf(UsageError);
  });

  it('refuses a hello the declaration could not publish, before any case runs', async () => {
    const dir = corpus(['conf-10--never-folded-step']);
    const refused = async (s: ScriptedSubject, message: RegExp) => {
      const r = runConformance({ subject: s, corpusDir: dir });
      await expect(r).rejects.toBeInstanceOf(UsageError);
      await expect(r).rejects.toThrow(message);
    };
    await refused(new ScriptedSubject({ requirements: ['CONF-01', 'banana'] }), /"banana"/);
    await refused(new ScriptedSubject({ requirements: ['CONF-99'] }), /"CONF-99"/);
    await refused(new ScriptedSubject({ strictnesses: ['Halts On Tuesdays'] }), /strictness/);
    await refused(new ScriptedSubject({ runtimeName: '' }), /runtime\.name/);
  });

  it('runs only the cases of the chosen profile, with total = the profile size', async () => {
    const dir = corpus(['conf-07--evicted-back-to-baseline', 'conf-10--never-folded-step']);
    const { decl, report } = await run(new ScriptedSubject(), dir, 'store');
    expect(report.cases.map((c) => c.case_id)).toEqual(['conf-10--never-folded-step']);
    expect(decl).toMatchObject({ profile: 'store', counts: { pass: 1, total: 1 } });
  });
});
