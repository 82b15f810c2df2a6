import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { HAS_SHARED, sharedPath } from '../test-utils/shared.js';
import { tempDir } from '../test-utils/temp-dir.js';
import { familiesOf, familyOf } from './families.js';

const tmp = tempDir();
afterAll(() => tmp.cleanup());

describe('familiesOf', () => {
  it('maps the manifest formats to families; unlisted trajectories are "other"', () => {
    const dir = join(tmp.dir, 'data', 'trajectories');
    mkdirSync(dir, { recursive: true });
    writeFileSync(
      join(tmp.dir, 'data', 'manifest.json'),
      JSON.stringify({
        trajectories: [
          { turns_file: 'a.jsonl', format: 'claude_console' },
          { turns_file: 'b.jsonl', format: 'cline' },
          { turns_file: 'c.jsonl', format: 'new_agent' },
          { turns_file: 7, format: 'cline' },
        ],
      }),
    );
    const f = familiesOf(dir);
    expect([...f.entries()]).toEqual([
      ['a', 'claude-code'],
      ['b', 'cline'],
      ['c', 'new_agent'],
    ]);
    expect(familyOf(f, 'zzz')).toBe('other');
    expect(familiesOf(join(tmp.dir, 'nowhere', 'trajectories')).size).toBe(0);
  });

  it.skipIf(!HAS_SHARED)('knows every shared trajectory', () => {
    const f = familiesOf(sharedPath('data', 'trajectories'));
    expect(new Set(f.values())).toEqual(new Set(['claude-code', 'cline', 'aider', 'swe-agent']));
  });
});
