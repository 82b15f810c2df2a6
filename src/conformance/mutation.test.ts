import { describe, expect, it } from 'vitest';
import { buildDeclaration, validateDeclaration } from './declaration.js';
import type { LibrarySubject } from './library-subject.js';
import { runConformance } from './runner.js';
import { FAST_TMP } from './test-utils/fixtures.js';
import {
  ContentForMissingSubject,
  FollowsSymlinkSubject,
  ForgetsEvictionSubject,
  OlderNodeInPlaceSubject,
  SkipsHashCheckSubject,
} from './test-utils/mutant-subjects.js';

/** Each deliberately broken subject, and cases that must catch it with a `fail`. */
const MUTANTS: [string, () => LibrarySubject, string[]][] = [
  [
    'skips the hash check',
    () => new SkipsHashCheckSubject(),
    [
      'conf-09--one-byte-in-raw-content',
      'conf-09--artifact-hash-forged',
      'conf-09--page-in-refuses-tampered-node',
    ],
  ],
  [
    'forgets eviction',
    () => new ForgetsEvictionSubject(),
    ['conf-07--evicted-back-to-baseline', 'conf-07--rapid-fire-recalls-turns-100-105'],
  ],
  [
    'hydrates an over-budget older node in place of the latest',
    () => new OlderNodeInPlaceSubject(),
    ['conf-13--intent-ownership-over-budget-latest'],
  ],
  [
    'returns content for a missing node',
    () => new ContentForMissingSubject(),
    [
      'conf-10--never-folded-step',
      'conf-10--missing-file-is-broken-reference',
      'conf-12--crash-b-broken-reference',
    ],
  ],
  [
    'follows a symlink out of the store',
    () => new FollowsSymlinkSubject(),
    ['conf-12--symlink-out-of-store'],
  ],
];

describe('mutation check: the corpus catches deliberately broken subjects', () => {
  for (const [name, make, catchers] of MUTANTS) {
    it(`catches a subject that ${name}`, async () => {
      const subject = make();
      const report = await runConformance({ subject, tmpDir: FAST_TMP });
      await subject.close();
      const decl = buildDeclaration(report);
      expect(validateDeclaration(decl)).toEqual([]);
      const failed = report.cases.filter((c) => c.verdict === 'fail').map((c) => c.case_id);
      expect(failed.length).toBeGreaterThan(0);
      for (const id of catchers) expect(failed, `${id} must fail`).toContain(id);
      // The break is targeted: it is caught by failing cases, not by the run erroring out.
      expect(decl.counts.error).toBe(0);
      expect(decl.counts.pass).toBeGreaterThan(decl.counts.total / 2);
    });
  }
});
