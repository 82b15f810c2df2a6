import { execFileSync, spawnSync } from 'node:child_process';
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { Ajv2020 } from 'ajv/dist/2020.js';
import { describe, expect, it } from 'vitest';
import { tempDir } from '../test-utils/temp-dir.js';
import { DEFAULT_CASE_FILE, loadCaseFile } from './case-file.js';
import { caseFileJsonSchema } from './case-schema.js';
import { adapterDeclarationJsonSchema } from './declaration.js';

const SCHEMA = join(DEFAULT_CASE_FILE, '..', 'cases.schema.json');
const DECLARATION_SCHEMA = join(DEFAULT_CASE_FILE, '..', 'declaration.schema.json');
const raw = () => JSON.parse(readFileSync(DEFAULT_CASE_FILE, 'utf8'));

/** Writes a changed copy of the shipped case file and loads it. */
function loadChanged(change: (doc: ReturnType<typeof raw>) => void) {
  const doc = raw();
  change(doc);
  const path = join(tempDir().dir, 'cases.json');
  writeFileSync(path, JSON.stringify(doc));
  return () => loadCaseFile(path);
}

describe('the adapter case file', () => {
  it('has at least 30 cases of both classes, each with a source anchor, one version with a reason', () => {
    const { file, content_sha256 } = loadCaseFile();
    expect(file.cases.length).toBeGreaterThanOrEqual(30);
    const classes = new Set(file.cases.map((c) => c.class));
    expect([...classes].sort()).toEqual(['liveness', 'safety']);
    for (const c of file.cases) expect(c.source.length, c.id).toBeGreaterThan(0);
    expect(file.changelog[0]).toMatchObject({ version: file.version });
    expect(content_sha256).toMatch(/^[0-9a-f]{64}$/);
  });

  it('publishes the JSON Schemas generated from the definitions the runner validates with', async () => {
    const pretty = (v: unknown) => `${JSON.stringify(v, null, 2)}\n`;
    await expect(pretty(caseFileJsonSchema())).toMatchFileSnapshot(SCHEMA);
    await expect(pretty(adapterDeclarationJsonSchema())).toMatchFileSnapshot(DECLARATION_SCHEMA);
  });

  it('validates against the published schema with an independent validator (ajv)', () => {
    const validate = new Ajv2020({ allErrors: true, strict: false }).compile(
      JSON.parse(readFileSync(SCHEMA, 'utf8')),
    );
    expect(validate(raw()), JSON.stringify(validate.errors)).toBe(true);
    const broken = raw();
    broken.cases[0].class = 'maybe';
    expect(validate(broken)).toBe(false);
  });

  it('is refused at load, with the place named, when broken', () => {
    expect(
      loadChanged((d) => {
        d.cases[0].class = 'maybe';
      }),
    ).toThrow(/malformed at cases\.0\.class/);
    expect(
      loadChanged((d) => {
        d.cases[1].id = d.cases[0].id;
      }),
    ).toThrow(/listed twice/);
    expect(
      loadChanged((d) => {
        d.cases[0].expect.calls[0].paged = { includes: ['nobody'] };
      }),
    ).toThrow(/unknown record nobody/);
    expect(
      loadChanged((d) => {
        d.cases[0].input.store[0].record = 'nobody';
      }),
    ).toThrow(/store action edit_payload names main\/nobody/);
    expect(
      loadChanged((d) => {
        const safety = d.cases.find((c: { class: string }) => c.class === 'safety');
        safety.strictness_allowed = [
          {
            conjunct: 'x',
            description: 'x',
            present_when: { a: 1 },
            absence_case_id: d.cases[1].id,
          },
        ];
      }),
    ).toThrow(/a safety case allows no strictness/);
    expect(
      loadChanged((d) => {
        d.cases[0].input.sessions.main.history[0].host_context = 'live';
      }),
    ).toThrow(/a compacted turn follows a live one/);
    expect(
      loadChanged((d) => {
        d.version = '9.9.9';
      }),
    ).toThrow(/no changelog entry/);
    expect(
      loadChanged((d) => {
        const c = d.cases.find(
          (x: { id: string }) => x.id === 'isolation--foreign-orphan-never-paged',
        );
        c.input.sessions.other.history[0].record = 'alpha';
      }),
    ).toThrow(/a record name is used by two sessions/);
    expect(
      loadChanged((d) => {
        d.cases[0].expect.calls.push({});
      }),
    ).toThrow(/one entry per input call/);
  });
});

const python = spawnSync('python3', ['--version']).status === 0;

describe.runIf(python)(
  'the case file generator (conformance/adapters/tools/build_cases.py)',
  () => {
    it('re-derives exactly the committed case file', () => {
      const out = execFileSync(
        'python3',
        [join(DEFAULT_CASE_FILE, '..', 'tools', 'build_cases.py'), '--check'],
        { encoding: 'utf8' },
      );
      expect(out).toBe('');
    });
  },
);
