import { describe, expect, it } from 'vitest';
import { packageJson } from '../fs/package-root.js';
import { buildDeclaration, validateDeclaration } from './declaration.js';
import { LIBRARY_REQUIREMENTS, LIBRARY_STRICTNESSES, LibrarySubject } from './library-subject.js';
import { runConformance } from './runner.js';
import { FAST_TMP } from './test-utils/fixtures.js';
import { DECLARATION_PAGE, publishedDeclarations } from './test-utils/published.js';
import { REQUIREMENT_IDS } from './types.js';

describe('the library, in-process, against the whole corpus', () => {
  it('passes every case, and the docs publish exactly this declaration', async () => {
    const subject = new LibrarySubject();
    const report = await runConformance({ subject, tmpDir: FAST_TMP });
    await subject.close();
    const notPassing = report.cases.filter((c) => c.verdict !== 'pass');
    expect(notPassing.map((c) => `${c.case_id}: ${c.verdict}: ${c.reason}`)).toEqual([]);
    // One declared strictness, and the one case it excuses (a visible cost, PROTOCOL.md §5.2).
    expect(report.cases.filter((c) => c.strictness !== undefined)).toEqual([
      expect.objectContaining({
        case_id: 'conf-12--dotdot-inside-file-path',
        strictness: 'refuses_dotdot_in_file_path',
      }),
    ]);
    const decl = buildDeclaration(report);
    expect(validateDeclaration(decl)).toEqual([]);
    expect(decl).toMatchObject({
      runtime: { name: 'contextfold', version: packageJson().version },
      declared_requirements: [...REQUIREMENT_IDS],
      counts: {
        pass: report.cases.length,
        fail: 0,
        not_applicable: 0,
        error: 0,
        total: report.cases.length,
      },
      non_passing: [],
      declared_strictnesses: [
        {
          conjunct: 'refuses_dotdot_in_file_path',
          applied_in: ['conf-12--dotdot-inside-file-path'],
        },
      ],
    });
    const published = publishedDeclarations();
    expect(
      published.map(([file]) => file),
      `${DECLARATION_PAGE} must publish the declaration`,
    ).toContain(DECLARATION_PAGE);
    for (const [file, shown] of published)
      expect(shown, `${file} shows a stale declaration`).toEqual(decl);
  });
});

describe('LibrarySubject', () => {
  it('declares the full requirement set from one constant', async () => {
    const s = new LibrarySubject();
    const r = await s.request({ id: 1, op: 'hello', protocol: 'ipcf-subject/1' });
    expect(r).toMatchObject({
      ok: true,
      result: {
        protocol: 'ipcf-subject/1',
        requirements: [...LIBRARY_REQUIREMENTS],
        strictnesses: [...LIBRARY_STRICTNESSES],
      },
    });
  });

  it('answers an unknown operation with UnsupportedOperation and an op before open with UsageError', async () => {
    const s = new LibrarySubject();
    expect(await s.request({ id: 2, op: 'teleport' })).toMatchObject({
      id: 2,
      ok: false,
      error: { name: 'UnsupportedOperation' },
    });
    expect(await s.request({ id: 3, op: 'hydrate', step_id: 1 })).toMatchObject({
      id: 3,
      ok: false,
      error: { name: 'UsageError' },
    });
    expect(await s.request({ id: 4, op: 'open', dir: 'relative/.contextfold' })).toMatchObject({
      ok: false,
      error: { name: 'UsageError' },
    });
  });
});
