import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { FAST_TMP } from '../conformance/test-utils/fixtures.js';
import { tempDir } from '../test-utils/temp-dir.js';
import { DEFAULT_CASE_FILE } from './case-file.js';
import { runAdapterAcceptance } from './runner.js';
import { HookSubject } from './subjects/hook-subject.js';

const LIVE = 'page-in--archived-record-in-live-context';
const ABSENT = 'page-in--archived-record-compacted';

/** The hook over some cases of the shipped file, optionally changed first. */
async function hook(cases: string[], change?: (doc: { cases: { id: string }[] }) => void) {
  let caseFile = DEFAULT_CASE_FILE;
  if (change) {
    const doc = JSON.parse(readFileSync(DEFAULT_CASE_FILE, 'utf8'));
    change(doc);
    caseFile = join(tempDir().dir, 'cases.json');
    writeFileSync(caseFile, JSON.stringify(doc));
  }
  const r = await runAdapterAcceptance({
    subjects: [new HookSubject()],
    cases,
    caseFile,
    tmpDir: FAST_TMP,
  });
  return new Map(r.adapters[0]!.cases.map((c) => [c.case_id, c]));
}

type Allowance = { conjunct: string; present_when: Record<string, unknown> };
const liveCase = (doc: { cases: { id: string }[] }) =>
  doc.cases.find((c) => c.id === LIVE) as unknown as { strictness_allowed: Allowance[] };

describe('the hook’s live-context rule is a declaration the suite checks, not a free pass', () => {
  it('is excused with its absence case in the run, which the hook passes on the floor', async () => {
    const v = await hook([LIVE, ABSENT]);
    expect(v.get(LIVE)).toMatchObject({ verdict: 'pass', strictness: ['record_in_live_context'] });
    expect(v.get(ABSENT)).toMatchObject({ verdict: 'pass', reason: '', strictness: [] });
  });

  it('fails without its absence case (undemonstrated)', async () => {
    const v = await hook([LIVE]);
    expect(v.get(LIVE)?.verdict).toBe('fail');
    expect(v.get(LIVE)?.reason).toContain('undemonstrated');
  });

  it('fails where the case does not list it, or binds it to something the input does not have', async () => {
    const unlisted = await hook([LIVE, ABSENT], (doc) => {
      liveCase(doc).strictness_allowed = [];
    });
    expect(unlisted.get(LIVE)?.verdict).toBe('fail');
    expect(unlisted.get(LIVE)?.reason).toContain('is not a strictness this case allows');
    const unbound = await hook([LIVE, ABSENT], (doc) => {
      liveCase(doc).strictness_allowed[0]!.present_when = {
        'sessions.main.history.0.host_context': 'live',
      };
    });
    expect(unbound.get(LIVE)?.verdict).toBe('fail');
    expect(unbound.get(LIVE)?.reason).toContain('not present on this input');
  });
});
