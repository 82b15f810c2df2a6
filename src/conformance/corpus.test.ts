import { execFileSync, spawnSync } from 'node:child_process';
import { readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { describeShared, sharedPath } from '../test-utils/shared.js';
import {
  corpusContentHash,
  DEFAULT_CORPUS_DIR,
  loadCaseDoc,
  loadCaseInputs,
  loadManifest,
  openCorpus,
} from './corpus.js';
import { subsetCorpus } from './test-utils/fixtures.js';
import { type CaseDoc, REQUIREMENT_IDS } from './types.js';

const manifest = loadManifest(DEFAULT_CORPUS_DIR);
const docs: CaseDoc[] = manifest.cases.map((c) => loadCaseDoc(DEFAULT_CORPUS_DIR, c.id));

const NAMED_TESTS = [
  'test_conf_01_lossless_storage',
  'test_conf_02_payload_round_trip',
  'test_conf_03_deterministic_addressing',
  'test_conf_04_temporal_disambiguation',
  'test_conf_05_exact_verbatim_retrieval',
  'test_conf_06_bounded_rehydration_cap',
  'test_conf_06_turn_budget',
  'test_conf_07_enforced_eviction_cycle',
  'test_conf_08_dual_projection_isolation',
  'test_conf_09_tamper_detection',
  'test_conf_10_explicit_failure_mode',
  'test_conf_11_deterministic_replay',
  'test_conf_12_inconsistent_state_detection',
  'test_conf_12_path_containment',
  'test_conf_13_multi_intent',
  'test_conf_13_passive_mmu_unicode',
];

describe('the corpus', () => {
  it('has at least 60 cases, one directory each, all listed in the manifest', () => {
    expect(manifest.cases.length).toBeGreaterThanOrEqual(60);
    const dirs = readdirSync(join(DEFAULT_CORPUS_DIR, 'cases')).sort();
    expect(dirs).toEqual(manifest.cases.map((c) => c.id).sort());
    expect(manifest.profiles.full!.cases).toEqual(manifest.cases.map((c) => c.id));
  });

  it('verifies every input of every case against its recorded length and SHA-256', () => {
    let n = 0;
    for (const doc of docs) n += loadCaseInputs(DEFAULT_CORPUS_DIR, doc).size;
    expect(n).toBeGreaterThan(docs.length);
  });

  it('agrees with each expected.json on requirements and class, and derives coverage from them', () => {
    for (const doc of docs) {
      const entry = manifest.cases.find((c) => c.id === doc.case_id)!;
      expect(entry.requirements).toEqual(doc.requirements);
      expect(entry.class).toEqual(doc.class);
    }
    for (const r of REQUIREMENT_IDS) {
      expect(manifest.requirements[r]!.cases).toEqual(
        docs.filter((d) => d.requirements.includes(r)).map((d) => d.case_id),
      );
    }
    for (const [name, ids] of Object.entries(manifest.named_tests)) {
      expect(ids).toEqual(
        docs.filter((d) => d.tags.includes(`named:${name}`)).map((d) => d.case_id),
      );
    }
  });

  it('covers every CONF-01..13, all 16 named tests, the stress scenarios and the edge cases', () => {
    for (const r of REQUIREMENT_IDS)
      expect(manifest.requirements[r]!.cases.length, r).toBeGreaterThan(0);
    expect(Object.keys(manifest.named_tests).sort()).toEqual([...NAMED_TESTS].sort());
    for (const t of NAMED_TESTS) expect(manifest.named_tests[t]!.length, t).toBeGreaterThan(0);
    expect(Object.keys(manifest.stress_scenarios).sort()).toEqual([
      'crash-a-orphaned-node',
      'crash-b-broken-reference',
      'crash-c-partial-write',
      'port-5433-5434-5433',
      'rapid-fire-recalls-100-105',
      'replay-two-clocks',
    ]);
    for (const [k, v] of Object.entries(manifest.stress_scenarios))
      expect(v.cases.length, k).toBeGreaterThan(0);
    expect(Object.keys(manifest.edge_cases).sort()).toEqual([
      'crlf',
      'empty-payload',
      'explicit-vs-extracted',
      'invalid-utf8',
      'nfd-vs-nfc',
      'policy-change',
      'projection-version',
      'turkish-i',
      'zero-width-homoglyph',
    ]);
    for (const [k, v] of Object.entries(manifest.edge_cases))
      expect(v.cases.length, k).toBeGreaterThan(0);
  });

  it('has both classes, and every allowed strictness names a refusable step and an existing absence case', () => {
    expect(docs.some((d) => d.class === 'safety')).toBe(true);
    expect(docs.some((d) => d.class === 'liveness')).toBe(true);
    const ids = new Set(docs.map((d) => d.case_id));
    for (const d of docs) {
      if (d.class === 'safety') expect(d.strictness_allowed, d.case_id).toEqual([]);
      for (const a of d.strictness_allowed) {
        expect(ids.has(a.absence_case_id), a.absence_case_id).toBe(true);
        expect(a.absence_case_id).not.toBe(d.case_id);
        const step = d.script[a.step]!;
        expect(step.op, `${d.case_id} step ${a.step}`).toBeDefined();
        expect(
          step.expect && 'result' in step.expect,
          `${d.case_id} step ${a.step} expects a result`,
        ).toBe(true);
      }
    }
  });

  it('keeps the invisible characters the edge cases are about (no editor cleaned them up)', () => {
    const bytes = (id: string, f: string) => readFileSync(join(DEFAULT_CORPUS_DIR, 'cases', id, f));
    expect(
      bytes('conf-01--crlf-payload-verbatim', 'payload.txt').includes(Buffer.from('\r\n')),
    ).toBe(true);
    expect(
      bytes('conf-13--homoglyph-is-a-different-term', 'cyrillic.txt').includes(
        Buffer.from('а', 'utf8'),
      ),
    ).toBe(true);
    expect(
      bytes('conf-13--homoglyph-is-a-different-term', 'zero-width.txt').includes(
        Buffer.from('\u200b', 'utf8'),
      ),
    ).toBe(true);
    const invalid = bytes('conf-01--invalid-utf8-payload-verbatim', 'payload.bin');
    expect(() => new TextDecoder('utf-8', { fatal: true }).decode(invalid)).toThrow();
    expect(bytes('conf-01--crlf-payload-verbatim', 'payload.txt').at(-1)).toBe(0x0a);
    expect(
      bytes('conf-13--passive-mmu-unicode', 'prompt-1.txt').toString('utf8').endsWith('?'),
    ).toBe(true);
  });
});

describe('input integrity and the content hash', () => {
  it('refuses an altered input, a resized input and an unlisted file, naming the file', () => {
    const id = 'conf-01--crlf-payload-verbatim';
    const c = subsetCorpus([id]);
    try {
      const doc = loadCaseDoc(c.dir, id);
      const p = join(c.dir, 'cases', id, 'payload.txt');
      const orig = readFileSync(p);
      expect(loadCaseInputs(c.dir, doc).get('payload.txt')).toEqual(orig);
      const flipped = Buffer.from(orig);
      flipped[3] = flipped[3]! ^ 0x20;
      writeFileSync(p, flipped);
      expect(() => loadCaseInputs(c.dir, doc)).toThrow(
        /payload\.txt has SHA-256 .* the fixture was altered/,
      );
      writeFileSync(p, orig.subarray(0, orig.length - 2));
      expect(() => loadCaseInputs(c.dir, doc)).toThrow(/payload\.txt has \d+ bytes/);
      writeFileSync(p, orig);
      writeFileSync(join(c.dir, 'cases', id, 'notes.txt'), 'x');
      expect(() => loadCaseInputs(c.dir, doc)).toThrow(/unlisted files: notes\.txt/);
    } finally {
      c.cleanup();
    }
  });

  it('opens a corpus as one handle that reads the same directory as the free functions', () => {
    const corpus = openCorpus();
    const id = manifest.cases[0]!.id;
    expect(corpus.dir).toBe(DEFAULT_CORPUS_DIR);
    expect(corpus.manifest).toEqual(manifest);
    expect(corpus.caseDoc(id)).toEqual(loadCaseDoc(DEFAULT_CORPUS_DIR, id));
    expect(corpus.caseInputs(docs[0]!)).toEqual(loadCaseInputs(DEFAULT_CORPUS_DIR, docs[0]!));
    expect(corpus.contentHash()).toBe(corpusContentHash(DEFAULT_CORPUS_DIR));
  });

  it('changes the corpus content hash when any case byte changes', () => {
    const id = 'conf-10--never-folded-step';
    const c = subsetCorpus([id]);
    try {
      const before = corpusContentHash(c.dir);
      expect(before).toMatch(/^[0-9a-f]{64}$/);
      expect(corpusContentHash(c.dir)).toBe(before);
      const p = join(c.dir, 'cases', id, 'expected.json');
      writeFileSync(p, `${readFileSync(p, 'utf8')} `);
      expect(corpusContentHash(c.dir)).not.toBe(before);
    } finally {
      c.cleanup();
    }
  });

  it('rejects a manifest whose lists name an unknown case', () => {
    const c = subsetCorpus(['conf-10--never-folded-step']);
    try {
      const p = join(c.dir, 'manifest.json');
      const m = JSON.parse(readFileSync(p, 'utf8'));
      m.profiles.store.cases.push('conf-99--missing');
      writeFileSync(p, JSON.stringify(m));
      expect(() => loadManifest(c.dir)).toThrow(
        /profiles\.store names unknown case conf-99--missing/,
      );
    } finally {
      c.cleanup();
    }
  });
});

describe('a profile that names a case twice', () => {
  it('is refused: the case would run and count twice', () => {
    const c = subsetCorpus(['conf-10--never-folded-step']);
    try {
      const p = join(c.dir, 'manifest.json');
      const m = JSON.parse(readFileSync(p, 'utf8'));
      m.profiles.store.cases.push('conf-10--never-folded-step');
      writeFileSync(p, JSON.stringify(m));
      expect(() => loadManifest(c.dir)).toThrow(
        /profiles\.store names case conf-10--never-folded-step twice/,
      );
    } finally {
      c.cleanup();
    }
  });
});

const python = spawnSync('python3', ['--version']).status === 0;

describeShared('the corpus generator (conformance/tools/build_corpus.py)', () => {
  it.runIf(python)(
    're-derives exactly the committed corpus from the reference vectors (python3)',
    () => {
      const out = execFileSync(
        'python3',
        [
          join(DEFAULT_CORPUS_DIR, 'tools', 'build_corpus.py'),
          '--vectors',
          sharedPath('vectors'),
          '--out',
          DEFAULT_CORPUS_DIR,
          '--check',
        ],
        { encoding: 'utf8' },
      );
      expect(out).toBe('');
    },
  );
});
