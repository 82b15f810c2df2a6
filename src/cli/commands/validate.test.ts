import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { runCliInProcess } from '../../test-utils/cli.js';
import { tempDir } from '../../test-utils/temp-dir.js';

describe('contextfold validate', () => {
  it('a temp file a killed write left says what to run, and so does the last line', async () => {
    // Before, the line named the file only: nothing said that repair --apply clears it.
    const dir = join(tempDir().dir, '.contextfold');
    expect((await runCliInProcess(['--dir', dir, 'fold', '1', 'x'])).code).toBe(0);
    const temp = join(dir, 'cold_nodes', '.step_000002.json.tmp-999999-0');
    writeFileSync(temp, '{"partial":');
    const v = await runCliInProcess(['--dir', dir, 'validate']);
    expect(v.code).toBe(1);
    expect(v.stdout).toContain(
      `leftover temp file of an interrupted write (a process ended before it committed; not part of the store): run 'contextfold repair --apply' to move it to quarantine: ${temp}`,
    );
    expect(v.stdout.trimEnd().split('\n').at(-1)).toBe(
      "next: 'contextfold repair' shows the action for each problem, 'contextfold repair --apply' does them",
    );
    expect((await runCliInProcess(['--dir', dir, 'repair', '--apply'])).code).toBe(0);
    expect(await runCliInProcess(['--dir', dir, 'validate'])).toMatchObject({
      code: 0,
      stdout: 'ok: 1 node(s) verified, no problems\n',
    });
  });
});
