import { spawn } from 'node:child_process';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { ContextFold } from '../engine/context-fold.js';
import { tempDir } from '../test-utils/temp-dir.js';
import type { IndexWarning } from './index-backend.js';
import { LOCK_WAIT_NOTICE_MS, WriteLock } from './write-lock.js';

const lockModule = fileURLToPath(new URL('../../dist/store/write-lock.js', import.meta.url));

describe('WriteLock', () => {
  it('a lock file that cannot be created is a usage error naming it', () => {
    const root = tempDir().dir;
    writeFileSync(join(root, 'file'), 'not a directory');
    const path = join(root, 'file', 'write.lock');
    expect(() => new WriteLock(path).tryAcquire()).toThrow(
      expect.objectContaining({
        code: 'USAGE',
        // A library error names the option (the CLI says --dir): it named the CLI's flag.
        message: `store directory is not writable: cannot create its lock file ${path} (check its permissions, or choose another \`dir\`)`,
        details: { path, option: 'dir' },
      }),
    );
  });

  it('two handles exclude each other, in one process', async () => {
    const path = join(tempDir().dir, 'write.lock');
    const a = new WriteLock(path);
    const b = new WriteLock(path);
    expect(a.tryAcquire()).toBe(true);
    expect(b.tryAcquire()).toBe(false);
    expect(b.isLocked()).toBe(true);
    await expect(b.acquire(30)).rejects.toMatchObject({ code: 'LOCK_TIMEOUT' });
    const waiting = b.acquire(5_000);
    a.release();
    await waiting;
    expect(b.held).toBe(true);
    expect(a.tryAcquire()).toBe(false);
    b.close();
    expect(a.tryAcquire()).toBe(true);
    a.close();
  });

  it('is released by the kernel when its holder is killed (no staleness timer)', async () => {
    const path = join(tempDir().dir, 'write.lock');
    const child = spawn(
      process.execPath,
      [
        '--input-type=module',
        '-e',
        `const { WriteLock } = await import(${JSON.stringify(lockModule)});
         const l = new WriteLock(${JSON.stringify(path)});
         if (!l.tryAcquire()) process.exit(3);
         process.stdout.write('held\\n');
         setInterval(() => {}, 1000);`,
      ],
      { stdio: ['ignore', 'pipe', 'inherit'] },
    );
    await new Promise<void>((resolve) => child.stdout.once('data', () => resolve()));
    const mine = new WriteLock(path);
    expect(mine.tryAcquire()).toBe(false);
    child.kill('SIGKILL');
    await new Promise((r) => child.once('exit', r));
    expect(mine.tryAcquire()).toBe(true);
    mine.close();
  });

  it('a writer that waits long for the lock says so once, then goes on when it is released', async () => {
    const dir = join(tempDir().dir, '.contextfold');
    const warnings: IndexWarning[] = [];
    const cf = await ContextFold.open({
      dir,
      tokenizer: 'reference',
      onWarning: (w) => warnings.push(w),
    });
    await cf.fold({ stepId: 1, summary: 's', content: 'one' });
    const other = new WriteLock(join(dir, 'write.lock'));
    expect(other.tryAcquire()).toBe(true);
    const fold = cf.fold({ stepId: 2, summary: 's', content: 'two' });
    await new Promise((r) => setTimeout(r, LOCK_WAIT_NOTICE_MS + 600));
    expect(warnings.map((w) => w.code)).toEqual(['LOCK_WAIT']);
    expect(warnings[0]!.message).toMatch(/^waiting for the write lock, held by another process/);
    expect(warnings[0]!.path).toBe(join(dir, 'write.lock'));
    other.close();
    expect((await fold).step_id).toBe(2);
    expect(warnings).toHaveLength(1);
    await cf.close();
  }, 20_000);
});
