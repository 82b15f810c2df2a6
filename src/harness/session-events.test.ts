import { spawn } from 'node:child_process';
import { mkdirSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterEach, describe, expect, it } from 'vitest';
import { ContextFold } from '../engine/context-fold.js';
import { sha256Hex } from '../protocol/canonical-json.js';
import { LockTimeoutError } from '../protocol/errors.js';
import { isIntegrityCheckError } from '../protocol/ipcf-errors.js';
import { headFilePath } from '../store/records-head.js';
import { withWriteLock } from '../store/write-lock.js';
import {
  appendEvents,
  comparableEvent,
  EVENT_TYPES,
  eventsLockPath,
  eventsPath,
  readEvents,
  type SessionEvent,
} from './session-events.js';
import { scratch } from './test-utils/session-helpers.js';

const cleanups: (() => void)[] = [];
afterEach(() => {
  for (const c of cleanups.splice(0)) c();
});

const ev = (turn: number, at: string): SessionEvent => ({
  type: 'evict',
  turn,
  step_id: 7,
  recorded_at: at,
});

describe('events.jsonl', () => {
  it('appends and reads events back in order', async () => {
    const s = scratch();
    cleanups.push(s.cleanup);
    await appendEvents(s.dir, [ev(0, '2025-01-01T00:00:00Z')]);
    await appendEvents(s.dir, [ev(1, '2025-01-01T00:00:01Z'), ev(2, '2025-01-01T00:00:02Z')]);
    expect(readEvents(s.dir).map((e) => (e as { turn: number }).turn)).toEqual([0, 1, 2]);
    expect(readEvents(`${s.dir}-absent`)).toEqual([]);
  });

  it('refuses a directory that is no path with one usage error (it was a TypeError)', () => {
    for (const dir of [5, undefined, '']) {
      expect(() => readEvents(dir as string)).toThrow(
        expect.objectContaining({
          code: 'USAGE',
          message: expect.stringMatching(/^readEvents needs/),
        }),
      );
    }
  });

  it('refuses an invalid line with the path and line number, never skipping it', () => {
    const s = scratch();
    cleanups.push(s.cleanup);
    mkdirSync(s.dir, { recursive: true });
    const good = JSON.stringify(ev(0, 'x'));
    for (const [text, re] of [
      [`${good}\nnot json\n`, /line 2 is not valid JSON/],
      [`${good}\n{"type":"explode","recorded_at":"x"}\n`, /line 2 is not a session event/],
      [
        `${good}\n{"type":"append","from":0,"messages":[{"step_id":0,"role":"user"}],"stripped":[],"recorded_at":"x"}\n`,
        /line 2 message 0: expected/,
      ],
    ] as const) {
      writeFileSync(eventsPath(s.dir), text);
      let err: unknown;
      try {
        readEvents(s.dir);
      } catch (e) {
        err = e;
      }
      expect((err as Error).message).toMatch(re);
      expect((err as Error).message).toContain(eventsPath(s.dir));
    }
    writeFileSync(eventsPath(s.dir), `${good}\n${good.slice(0, 10)}`);
    let torn: unknown;
    try {
      readEvents(s.dir);
    } catch (e) {
      torn = e;
    }
    expect(isIntegrityCheckError(torn)).toBe(true);
    expect((torn as Error).message).toMatch(/line 2 is incomplete/);
  });

  it('appends onto a chained log from its last line, read alone (every line keeps the chain)', async () => {
    const s = scratch();
    cleanups.push(s.cleanup);
    const opened = {
      type: 'session_opened',
      config: { log_chain: 'sha256' },
      recorded_at: 'x',
    } as unknown as SessionEvent;
    const pin: SessionEvent = {
      type: 'pin',
      note_id: 0,
      source: null,
      text: 'y'.repeat(100_000),
      recorded_at: 'x',
    };
    await appendEvents(s.dir, [opened, pin]);
    await appendEvents(s.dir, [ev(1, 'x')]);
    const lines = readFileSync(eventsPath(s.dir), 'utf8').split('\n').slice(0, -1);
    expect(lines.map((l) => JSON.parse(l).prev)).toEqual([
      sha256Hex(''),
      sha256Hex(lines[0]!),
      sha256Hex(lines[1]!),
    ]);
    expect(readEvents(s.dir)).toEqual([opened, pin, ev(1, 'x')]);
  });

  it('appendEvents keeps the head: an old log counted once, a log cut short refused, not chained on', async () => {
    const s = scratch();
    cleanups.push(s.cleanup);
    mkdirSync(s.dir, { recursive: true });
    const path = eventsPath(s.dir);
    const head = () => JSON.parse(readFileSync(headFilePath(path), 'utf8'));
    // A log from before the head: no head file; the first append counts its lines.
    writeFileSync(path, `${JSON.stringify(ev(0, 'x'))}\n${JSON.stringify(ev(1, 'x'))}\n`);
    await appendEvents(s.dir, [ev(2, 'x')]);
    let lines = readFileSync(path, 'utf8').split('\n').slice(0, -1);
    expect(head()).toEqual({
      lines: 3,
      bytes: statSync(path).size,
      last_sha256: sha256Hex(lines[2]!),
    });
    await appendEvents(s.dir, [ev(3, 'x'), ev(4, 'x')]);
    lines = readFileSync(path, 'utf8').split('\n').slice(0, -1);
    expect(head()).toMatchObject({ lines: 5, last_sha256: sha256Hex(lines[4]!) });
    // The last line removed: the append is refused (it would have chained on and moved the head).
    const cut = `${lines.slice(0, 4).join('\n')}\n`;
    writeFileSync(path, cut);
    await expect(appendEvents(s.dir, [ev(5, 'x')])).rejects.toMatchObject({
      code: 'INTEGRITY_CHECK',
      message: expect.stringContaining(`${path} line 5 is missing`),
    });
    expect(readFileSync(path, 'utf8')).toBe(cut);
    expect(() => readEvents(s.dir)).toThrow(/line 5 is missing/);
  });

  it('a log or head that is a directory is refused naming it (it was an internal error)', async () => {
    const s = scratch();
    cleanups.push(s.cleanup);
    const path = eventsPath(s.dir);
    for (const dir of [headFilePath(path), path]) {
      mkdirSync(dir, { recursive: true });
      expect(() => readEvents(s.dir)).toThrow(
        expect.objectContaining({
          code: 'INTEGRITY_CHECK',
          message: `${dir} is a directory, not a file of the session log`,
        }),
      );
      await expect(appendEvents(s.dir, [ev(0, 'x')])).rejects.toMatchObject({
        code: 'INTEGRITY_CHECK',
      });
      const cf = await ContextFold.open({ dir: s.dir, tokenizer: 'reference' });
      await expect(cf.readRecords('events')).rejects.toMatchObject({ code: 'INTEGRITY_CHECK' });
      await cf.close();
      rmSync(dir, { recursive: true });
    }
  });

  it('compares events without their wall-clock stamp', () => {
    expect(comparableEvent(ev(3, '2025-01-01T00:00:00Z'))).toBe(
      comparableEvent(ev(3, '2031-01-01T00:00:00Z')),
    );
    expect(comparableEvent(ev(3, 'a'))).not.toBe(comparableEvent(ev(4, 'a')));
  });
});

const eventsModule = fileURLToPath(
  new URL('../../dist/harness/session-events.js', import.meta.url),
);

/** A child process that appends `count` large pin events (one per call) as `writer`. */
function appender(dir: string, writer: string, count: number, lockTimeoutMs = 30_000) {
  const script = `import { appendEvents } from ${JSON.stringify(eventsModule)};
const [dir, writer, count, timeout] = process.argv.slice(1);
for (let i = 0; i < Number(count); i++) {
  const text = writer + ':' + i + ':' + writer.repeat(48 * 1024);
  await appendEvents(dir, [{ type: 'pin', note_id: i, source: writer, text, recorded_at: 'x' }], { lockTimeoutMs: Number(timeout) });
}`;
  return new Promise<{ code: number; stderr: string }>((resolve, reject) => {
    const p = spawn(
      process.execPath,
      ['--input-type=module', '-e', script, dir, writer, String(count), String(lockTimeoutMs)],
      { stdio: ['ignore', 'ignore', 'pipe'] },
    );
    let stderr = '';
    p.stderr.on('data', (d) => {
      stderr += d;
    });
    p.on('error', reject);
    p.on('exit', (code) => resolve({ code: code ?? -1, stderr }));
  });
}

describe('events.jsonl across processes', () => {
  it('two processes appending to one session: every event present, none interleaved', async () => {
    const s = scratch();
    cleanups.push(s.cleanup);
    const results = await Promise.all([appender(s.dir, 'a', 60), appender(s.dir, 'b', 60)]);
    expect(results.map((r) => r.code)).toEqual([0, 0]);
    // readEvents refuses any torn or merged line, so parsing at all proves no interleaving.
    const events = readEvents(s.dir) as Extract<SessionEvent, { type: 'pin' }>[];
    expect(events).toHaveLength(120);
    for (const w of ['a', 'b']) {
      const mine = events.filter((e) => e.source === w);
      expect(mine.map((e) => e.note_id)).toEqual(Array.from({ length: 60 }, (_, i) => i));
      for (const e of mine) expect(e.text).toBe(`${w}:${e.note_id}:${w.repeat(48 * 1024)}`);
    }
    expect(readFileSync(eventsPath(s.dir), 'utf8').split('\n')).toHaveLength(121);
  });

  it('an append waits for the events lock another process holds (and times out clearly)', async () => {
    const s = scratch();
    cleanups.push(s.cleanup);
    mkdirSync(s.dir, { recursive: true });
    const blocked = await withWriteLock(s.dir, eventsLockPath(s.dir), 1000, () =>
      appender(s.dir, 'c', 1, 300),
    );
    expect(blocked.code).not.toBe(0);
    expect(blocked.stderr).toContain(
      `store is locked by another writer for more than 300 ms: ${join(s.dir, 'events.jsonl.lock')}`,
    );
    expect(readEvents(s.dir)).toEqual([]);
    expect((await appender(s.dir, 'c', 1, 300)).code).toBe(0);
    expect(readEvents(s.dir)).toHaveLength(1);
    // In process, the same lock is refused with the typed error.
    await withWriteLock(s.dir, eventsLockPath(s.dir), 1000, async () => {
      const e = await appendEvents(s.dir, [ev(0, 'x')], { lockTimeoutMs: 50 }).catch(
        (x: unknown) => x,
      );
      expect(e).toBeInstanceOf(LockTimeoutError);
    });
  });
});

describe('the event types in docs/harness.md', () => {
  it('lists every event type the log can hold, each in a row of the events table', () => {
    const doc = readFileSync(
      fileURLToPath(new URL('../../docs/harness.md', import.meta.url)),
      'utf8',
    );
    const rows = doc.split('\n').filter((l) => l.startsWith('| `'));
    for (const t of EVENT_TYPES) {
      expect(
        rows.some((r) => r.split('|')[1]!.includes(`\`${t}\``)),
        t,
      ).toBe(true);
    }
  });
});
