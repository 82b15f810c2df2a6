import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { tempDir } from '../test-utils/temp-dir.js';
import { SubjectProtocolError, spawnSubject } from './process-subject.js';

const tmp = tempDir();
afterAll(() => tmp.cleanup());

const script = join(tmp.dir, 'fake-subject.cjs');
writeFileSync(
  script,
  `const rl = require('readline').createInterface({ input: process.stdin });
let helloSeen = false;
const out = (o) => process.stdout.write(JSON.stringify(o) + '\\n');
rl.on('line', (l) => {
  const r = JSON.parse(l);
  if (r.op === 'hello') { helloSeen = true; out({ id: r.id, ok: true, result: { protocol: 'ipcf-subject/1' } }); }
  else if (r.op === 'garbage') process.stdout.write('oops\\n');
  else if (r.op === 'wrong_id') out({ id: r.id + 1, ok: true, result: {} });
  else if (r.op === 'die') { process.stderr.write('fatal: boom\\n'); process.exit(3); }
  else if (r.op === 'slow') {}
  else if (r.op === 'hang') setInterval(() => {}, 1000);
  else if (r.op === 'twice') { out({ id: r.id, ok: true, result: {} }); out({ id: r.id, ok: true, result: {} }); }
  else out({ id: r.id, ok: true, result: { helloSeen, pid: process.pid } });
});
`,
);

describe('spawnSubject', () => {
  it('speaks JSON lines, and replaces a process that broke the protocol (replaying hello)', async () => {
    const s = spawnSubject({ command: `"${process.execPath}" "${script}"`, timeoutMs: 2_000 });
    try {
      expect(await s.request({ id: 1, op: 'hello', protocol: 'ipcf-subject/1' })).toMatchObject({
        ok: true,
      });
      const first = await s.request({ id: 2, op: 'ping' });
      expect(first).toMatchObject({ id: 2, ok: true, result: { helloSeen: true } });
      const pid = (first as unknown as { result: { pid: number } }).result.pid;

      await expect(s.request({ id: 3, op: 'garbage' })).rejects.toThrow(/not JSON: oops/);
      const second = await s.request({ id: 4, op: 'ping' });
      expect(second).toMatchObject({ ok: true, result: { helloSeen: true } });
      expect((second as unknown as { result: { pid: number } }).result.pid).not.toBe(pid);

      await expect(s.request({ id: 5, op: 'wrong_id' })).rejects.toThrow(
        /answered id 6 to request 5/,
      );
      await expect(s.request({ id: 6, op: 'die' })).rejects.toThrow(
        /exited \(code 3\): fatal: boom/,
      );
      await expect(s.request({ id: 7, op: 'slow' })).rejects.toBeInstanceOf(SubjectProtocolError);
      expect(await s.request({ id: 8, op: 'ping' })).toMatchObject({ id: 8, ok: true });
    } finally {
      await s.close();
    }
  });

  it('reports a command that cannot start as a protocol error', async () => {
    const s = spawnSubject({ command: 'definitely-not-a-command-cf-xyz', timeoutMs: 2_000 });
    await expect(
      s.request({ id: 1, op: 'hello', protocol: 'ipcf-subject/1' }),
    ).rejects.toBeInstanceOf(SubjectProtocolError);
    await s.close();
  });

  it.runIf(process.platform !== 'win32')(
    'ends the subject the shell started, not only the shell, when it hangs',
    async () => {
      // `; :` keeps the shell from exec'ing node: the subject is the shell's child.
      const s = spawnSubject({ command: `"${process.execPath}" "${script}"; :`, timeoutMs: 500 });
      const alive = (pid: number): boolean => {
        try {
          process.kill(pid, 0);
          return true;
        } catch {
          return false;
        }
      };
      try {
        await s.request({ id: 1, op: 'hello', protocol: 'ipcf-subject/1' });
        const ping = await s.request({ id: 2, op: 'ping' });
        const pid = (ping as unknown as { result: { pid: number } }).result.pid;
        // A subject stuck in a loop: it no longer notices its stdin closing.
        await expect(s.request({ id: 3, op: 'hang' })).rejects.toThrow(/did not answer hang/);
        for (let i = 0; i < 100 && alive(pid); i++) await new Promise((r) => setTimeout(r, 20));
        expect(alive(pid)).toBe(false);
      } finally {
        await s.close();
      }
    },
  );

  it('takes a line no request asked for (a second response) as a violation, reported on the next request', async () => {
    const s = spawnSubject({ command: `"${process.execPath}" "${script}"`, timeoutMs: 2_000 });
    try {
      await s.request({ id: 1, op: 'hello', protocol: 'ipcf-subject/1' });
      expect(await s.request({ id: 2, op: 'twice' })).toMatchObject({ id: 2, ok: true });
      // Wherever the second line lands (before or after request 3 is written), request 3 fails.
      await new Promise((r) => setTimeout(r, 200));
      await expect(s.request({ id: 3, op: 'ping' })).rejects.toThrow(
        /no request asked for: \{"id":2/,
      );
      expect(await s.request({ id: 4, op: 'ping' })).toMatchObject({ id: 4, ok: true });
    } finally {
      await s.close();
    }
  });
});
