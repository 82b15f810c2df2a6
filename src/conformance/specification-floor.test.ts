import { describe, expect, it } from 'vitest';
import { DEFAULT_CORPUS_DIR, loadCaseDoc, loadManifest } from './corpus.js';
import { LibrarySubject } from './library-subject.js';
import { runConformance } from './runner.js';
import { FAST_TMP, subsetCorpus } from './test-utils/fixtures.js';
import { FollowsSymlinkSubject } from './test-utils/mutant-subjects.js';
import {
  IntegrityNamedSubject,
  NoMaxTokensSubject,
  ResolvesDotdotSubject,
  UndeclaredSubject,
  UntypedIndexErrorSubject,
} from './test-utils/reference-choices.js';

/** Runs some cases of the shipped corpus against a subject; returns verdict and reason by id. */
async function run(subject: LibrarySubject, ids: string[]) {
  const c = subsetCorpus(ids);
  try {
    const report = await runConformance({ subject, corpusDir: c.dir, tmpDir: FAST_TMP });
    return new Map(report.cases.map((o) => [o.case_id, o]));
  } finally {
    await subject.close();
    c.cleanup();
  }
}

const FOUR = [
  'conf-12--symlink-to-sibling-node',
  'conf-12--corrupt-index-refused',
  'conf-06--max-tokens-tightens-cap',
  'conf-12--dotdot-inside-file-path',
];

describe('corpus 1.1.0: the four cases that asked more than the specification', () => {
  it('is a minor version with the reason written down, and the reference verdicts kept as evidence only', () => {
    const m = loadManifest(DEFAULT_CORPUS_DIR);
    expect(m.version).toBe('1.1.0');
    expect(m.changelog?.[0]).toMatchObject({ version: '1.1.0', kind: 'minor' });
    for (const id of FOUR) expect(m.changelog?.[0]?.reason).toContain(id);
    expect(m.observed?.[0]?.profiles).toEqual({
      full: { pass: 67, fail: 11, not_applicable: 0, error: 20, total: 98 },
      store: { pass: 67, fail: 7, not_applicable: 0, error: 0, total: 74 },
    });
    for (const id of FOUR) {
      const doc = loadCaseDoc(DEFAULT_CORPUS_DIR, id);
      expect(doc.observed).toEqual([
        expect.objectContaining({ corpus_version: '1.0.0', verdict: 'fail' }),
      ]);
      // Evidence never leaks into an expectation: no step compares against the observed block.
      expect(JSON.stringify(doc.script)).not.toContain('observed');
    }
  });

  it('a symlink to a sibling node passes a runtime that refuses it as IntegrityCheckError', async () => {
    const v = await run(new IntegrityNamedSubject(), [
      'conf-12--symlink-to-sibling-node',
      'conf-12--symlink-out-of-store',
    ]);
    expect(v.get('conf-12--symlink-to-sibling-node')).toMatchObject({ verdict: 'pass' });
    // The spec names path containment for an escape: that case still insists on the name.
    expect(v.get('conf-12--symlink-out-of-store')?.verdict).toBe('fail');
  });

  it('a corrupt index passes a runtime that refuses it with an untyped error', async () => {
    const v = await run(new UntypedIndexErrorSubject(), [
      'conf-12--corrupt-index-refused',
      'conf-09--one-byte-in-raw-content',
    ]);
    expect(v.get('conf-12--corrupt-index-refused')).toMatchObject({ verdict: 'pass' });
    // CONF-09 names IntegrityCheckError for a tampered node file: still required there.
    expect(v.get('conf-09--one-byte-in-raw-content')?.verdict).toBe('fail');
  });

  it('max_tokens passes a runtime bounded only by the policy cap', async () => {
    const v = await run(new NoMaxTokensSubject(), ['conf-06--max-tokens-tightens-cap']);
    expect(v.get('conf-06--max-tokens-tightens-cap')).toMatchObject({ verdict: 'pass' });
  });

  it('a dotdot file_path that returns to the node passes on the floor for a runtime that resolves it', async () => {
    const v = await run(new ResolvesDotdotSubject(), [
      'conf-12--dotdot-inside-file-path',
      'conf-07--evicted-back-to-baseline',
    ]);
    const o = v.get('conf-12--dotdot-inside-file-path');
    expect(o).toMatchObject({ verdict: 'pass', reason: '' });
    expect(o?.strictness).toBeUndefined();
  });

  it('refusing it passes only as the declared, demonstrated strictness; undeclared it fails', async () => {
    const ids = ['conf-12--dotdot-inside-file-path', 'conf-07--evicted-back-to-baseline'];
    const declared = await run(new LibrarySubject(), ids);
    expect(declared.get(ids[0]!)).toMatchObject({
      verdict: 'pass',
      strictness: 'refuses_dotdot_in_file_path',
    });
    const undeclared = await run(new UndeclaredSubject(), ids);
    expect(undeclared.get(ids[0]!)?.verdict).toBe('fail');
    expect(undeclared.get(ids[0]!)?.reason).toContain(
      'a stricter runtime must declare refuses_dotdot_in_file_path',
    );
    // Without its absence case in the run, the declaration is undemonstrated: a fail.
    const alone = await run(new LibrarySubject(), [ids[0]!]);
    expect(alone.get(ids[0]!)?.verdict).toBe('fail');
    expect(alone.get(ids[0]!)?.reason).toContain('undemonstrated');
  });

  it('the relaxed cases still catch a runtime that serves what it must refuse', async () => {
    const v = await run(new FollowsSymlinkSubject(), ['conf-12--symlink-to-sibling-node']);
    expect(v.get('conf-12--symlink-to-sibling-node')?.verdict).toBe('fail');
  });
});
