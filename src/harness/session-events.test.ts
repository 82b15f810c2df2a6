import { mkdirSync, writeFileSync } from 'node:fs';
import { afterEach, describe, expect, it } from 'vitest';
import { isIntegrityCheckError } from '../protocol/errors.js';
import {
  appendEvents,
  comparableEvent,
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
  it('appends and reads events back in order', () => {
    const s = scratch();
    cleanups.push(s.cleanup);
    appendEvents(s.dir, [ev(0, '2025-01-01T00:00:00Z')]);
    appendEvents(s.dir, [ev(1, '2025-01-01T00:00:01Z'), ev(2, '2025-01-01T00:00:02Z')]);
    expect(readEvents(s.dir).map((e) => (e as { turn: number }).turn)).toEqual([0, 1, 2]);
    expect(readEvents(`${s.dir}-absent`)).toEqual([]);
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

  it('compares events without their wall-clock stamp', () => {
    expect(comparableEvent(ev(3, '2025-01-01T00:00:00Z'))).toBe(
      comparableEvent(ev(3, '2031-01-01T00:00:00Z')),
    );
    expect(comparableEvent(ev(3, 'a'))).not.toBe(comparableEvent(ev(4, 'a')));
  });
});
