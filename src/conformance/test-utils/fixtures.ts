import {
  cpSync,
  existsSync,
  mkdirSync,
  mkdtempSync,
  readFileSync,
  rmSync,
  writeFileSync,
} from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { DEFAULT_CORPUS_DIR } from '../corpus.js';
import type { Manifest } from '../types.js';

/** A RAM-backed temp dir when there is one: the corpus folds with fsync, which is slow on disk. */
export const FAST_TMP = existsSync('/dev/shm') ? '/dev/shm' : tmpdir();

/**
 * Copies the named cases of the shipped corpus into a fresh corpus directory with a manifest
 * restricted to them (every profile and coverage list filtered), so a test can run a few cases.
 * Returns the directory and a cleanup function.
 */
export function subsetCorpus(ids: string[]): { dir: string; cleanup: () => void } {
  const dir = mkdtempSync(join(tmpdir(), 'cf-corpus-'));
  const m = JSON.parse(readFileSync(join(DEFAULT_CORPUS_DIR, 'manifest.json'), 'utf8')) as Manifest;
  const keep = new Set(ids);
  const f = (list: string[]) => list.filter((id) => keep.has(id));
  const out: Manifest = {
    ...m,
    case_count: ids.length,
    cases: m.cases.filter((c) => keep.has(c.id)),
    requirements: Object.fromEntries(
      Object.entries(m.requirements).map(([k, v]) => [k, { ...v, cases: f(v.cases) }]),
    ),
    named_tests: Object.fromEntries(Object.entries(m.named_tests).map(([k, v]) => [k, f(v)])),
    stress_scenarios: Object.fromEntries(
      Object.entries(m.stress_scenarios).map(([k, v]) => [k, { ...v, cases: f(v.cases) }]),
    ),
    edge_cases: Object.fromEntries(
      Object.entries(m.edge_cases).map(([k, v]) => [k, { ...v, cases: f(v.cases) }]),
    ),
    profiles: Object.fromEntries(
      Object.entries(m.profiles).map(([k, v]) => [k, { ...v, cases: f(v.cases) }]),
    ),
  };
  if (out.cases.length !== ids.length) throw new Error(`unknown case among ${ids.join(', ')}`);
  mkdirSync(join(dir, 'cases'));
  for (const id of ids)
    cpSync(join(DEFAULT_CORPUS_DIR, 'cases', id), join(dir, 'cases', id), { recursive: true });
  writeFileSync(join(dir, 'manifest.json'), JSON.stringify(out, null, 2));
  cpSync(join(DEFAULT_CORPUS_DIR, 'declaration.schema.json'), join(dir, 'declaration.schema.json'));
  return { dir, cleanup: () => rmSync(dir, { recursive: true, force: true }) };
}
