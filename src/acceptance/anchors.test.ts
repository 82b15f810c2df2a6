import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { HAS_SHARED, sharedPath } from '../test-utils/shared.js';
import { tempDir } from '../test-utils/temp-dir.js';
import { checkAnchor } from './anchors.js';
import { loadCaseFile } from './case-file.js';

describe('source anchors', () => {
  it('a code anchor holds while the file says the marker, across doc-comment line breaks', () => {
    expect(
      checkAnchor({
        surface: 'code',
        path: 'src/harness/session-core.ts',
        marker: 'pages in what the prompt needs (verified, bounded)',
      }),
    ).toEqual({ state: 'holds' });
  });

  it('breaks when the marker or the file is gone', () => {
    expect(
      checkAnchor({
        surface: 'code',
        path: 'src/harness/session-core.ts',
        marker: 'no such words here',
      }),
    ).toMatchObject({ state: 'broken', reason: expect.stringContaining('no longer contains') });
    expect(checkAnchor({ surface: 'code', path: 'src/gone.ts', marker: 'x' })).toMatchObject({
      state: 'broken',
      reason: 'src/gone.ts does not exist',
    });
  });

  it('reads dist/ when src/ is not shipped (an installed package)', () => {
    const root = tempDir().dir;
    mkdirSync(join(root, 'dist', 'harness'), { recursive: true });
    writeFileSync(join(root, 'dist', 'harness', 'x.js'), '/** evicts this turn’s pages */');
    expect(
      checkAnchor(
        { surface: 'code', path: 'src/harness/x.ts', marker: 'evicts this turn’s pages' },
        { root },
      ),
    ).toEqual({ state: 'holds' });
  });

  it('a spec anchor is unchecked without the specification text, never holding', () => {
    const a = {
      surface: 'spec',
      document: 'RFC-IPCF-001',
      clause: 'Security',
      marker: 'x',
    } as const;
    expect(checkAnchor(a)).toMatchObject({ state: 'unchecked' });
  });

  it('a CONF clause anchor must be on that requirement’s line', () => {
    const dir = tempDir().dir;
    writeFileSync(
      join(dir, 'conf.txt'),
      'Document ID: CONFORMANCE-IPCF-001\nCONF-09 Tamper: corrupted node is never hydrated\nCONF-10 other\n',
    );
    const ok = {
      surface: 'spec',
      document: 'CONFORMANCE-IPCF-001',
      clause: 'CONF-09',
      marker: 'corrupted node is never hydrated',
    } as const;
    expect(checkAnchor(ok, { specDir: dir })).toEqual({ state: 'holds' });
    expect(checkAnchor({ ...ok, clause: 'CONF-10' }, { specDir: dir })).toMatchObject({
      state: 'broken',
    });
    expect(checkAnchor({ ...ok, document: 'RFC-IPCF-001' }, { specDir: dir })).toMatchObject({
      state: 'broken',
    });
  });

  it('every anchor of the shipped cases holds (code always; spec where ../shared has the texts)', () => {
    const { file } = loadCaseFile();
    const specDir = HAS_SHARED ? sharedPath('seeds') : null;
    for (const c of file.cases) {
      for (const a of c.source) {
        const s = checkAnchor(a, { specDir });
        if (a.surface === 'spec' && !specDir) expect(s.state).toBe('unchecked');
        else expect(s, `${c.id}: ${JSON.stringify(a)}`).toEqual({ state: 'holds' });
      }
    }
  });
});
