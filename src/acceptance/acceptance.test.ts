import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { beforeAll, describe, expect, it } from 'vitest';
import { FAST_TMP } from '../conformance/test-utils/fixtures.js';
import { loadCaseFile } from './case-file.js';
import {
  type AdapterDeclaration,
  buildAdapterDeclaration,
  validateAdapterDeclaration,
} from './declaration.js';
import { formatAdapterTable } from './format.js';
import { type AcceptanceReport, runAdapterAcceptance } from './runner.js';
import { defaultSubjects } from './subjects/index.js';

const ROOT = fileURLToPath(new URL('../../', import.meta.url));

/** Marks the adapters' table in docs/conformance.md (as `contextfold conformance --adapters` prints it). */
const TABLE_MARKER = '<!-- adapters-table -->';

function publishedTable(): string {
  const text = readFileSync(`${ROOT}docs/conformance.md`, 'utf8');
  const at = text.indexOf(TABLE_MARKER);
  if (at < 0) throw new Error(`docs/conformance.md has no ${TABLE_MARKER}`);
  const block = /```text\n([\s\S]*?)```/.exec(text.slice(at));
  if (!block) throw new Error('docs/conformance.md: no text block after the table marker');
  return block[1]!;
}

describe('every integration over the adapter acceptance cases', () => {
  let report: AcceptanceReport;
  let decl: AdapterDeclaration;
  const { file } = loadCaseFile();
  const byId = new Map(file.cases.map((c) => [c.id, c]));
  const scrub = (id: string) => byId.get(id)!.requirements.includes('SEC-SCRUB');

  beforeAll(async () => {
    // No specification directory: the run the CLI makes by default (spec anchors are checked
    // against ../shared in anchors.test.ts).
    report = await runAdapterAcceptance({ subjects: defaultSubjects(), tmpDir: FAST_TMP });
    decl = buildAdapterDeclaration(report);
  }, 600_000);

  it('publishes a valid declaration with one row per integration', () => {
    expect(validateAdapterDeclaration(decl)).toEqual([]);
    expect(decl.adapters.map((a) => a.adapter)).toEqual([
      'session',
      'ai-sdk-middleware',
      'mcp-server',
      'claude-code-hook',
      'proxy-anthropic',
      'proxy-openai',
    ]);
    for (const a of decl.adapters) expect(a.counts.total).toBe(file.cases.length);
  });

  it('every adapter passes every safety case, the secret cases included', () => {
    for (const a of report.adapters) {
      for (const c of a.cases.filter((x) => x.class === 'safety')) {
        const where = `${a.adapter} ${c.case_id}: ${c.reason}`;
        if (c.verdict === 'not-applicable') continue; // checked below: CONF-07 only
        expect(c.verdict, where).toBe('pass');
      }
      const secrets = a.cases.filter((c) => scrub(c.case_id));
      expect(secrets.length, a.adapter).toBeGreaterThanOrEqual(6);
      expect(
        secrets.filter((c) => c.verdict !== 'pass'),
        a.adapter,
      ).toEqual([]);
    }
  });

  it('every liveness case passes: on the floor, or stricter only by a declared and demonstrated conjunct', () => {
    for (const a of report.adapters) {
      for (const c of a.cases.filter((x) => x.class === 'liveness')) {
        expect(c.verdict, `${a.adapter} ${c.case_id}: ${c.reason}`).toBe('pass');
      }
    }
    const strict = (adapter: string) =>
      decl.adapters.find((a) => a.adapter === adapter)!.declared_strictnesses;
    for (const a of [
      'session',
      'ai-sdk-middleware',
      'mcp-server',
      'proxy-anthropic',
      'proxy-openai',
    ])
      expect(strict(a)).toEqual([]);
    expect(strict('claude-code-hook')).toEqual([
      {
        conjunct: 'record_in_live_context',
        declared_in: expect.any(Number),
        applied_in: [
          'page-in--asks-again-after-eviction',
          'page-in--archived-record-in-live-context',
        ],
      },
    ]);
  });

  it('what an adapter cannot enforce is not-applicable, never a pass: CONF-07 for the MCP server and the hook (the proxy evicts)', () => {
    for (const a of report.adapters) {
      const na = a.cases.filter((c) => c.verdict === 'not-applicable').map((c) => c.case_id);
      const conf07 = file.cases.filter((c) => c.requirements.includes('CONF-07')).map((c) => c.id);
      if (a.adapter === 'mcp-server' || a.adapter === 'claude-code-hook') {
        expect(na).toEqual(conf07);
        expect(conf07.length).toBeGreaterThan(0);
      } else expect(na).toEqual([]);
    }
  });

  it('the proxy enforces eviction: it passes every CONF-07 case, in both dialects', () => {
    const conf07 = file.cases.filter((c) => c.requirements.includes('CONF-07')).map((c) => c.id);
    for (const name of ['proxy-anthropic', 'proxy-openai']) {
      const run = report.adapters.find((a) => a.adapter === name)!;
      const verdicts = run.cases.filter((c) => conf07.includes(c.case_id)).map((c) => c.verdict);
      expect(verdicts, name).toEqual(conf07.map(() => 'pass'));
    }
  });

  it('nothing errors: every case runs on every integration', () => {
    for (const a of decl.adapters) expect(a.counts.error, JSON.stringify(a.non_passing)).toBe(0);
  });

  it('docs/conformance.md shows the table exactly as `contextfold conformance --adapters` prints it', () => {
    expect(publishedTable()).toBe(formatAdapterTable(decl));
  });
});
