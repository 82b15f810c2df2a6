import { readFileSync, rmSync, writeFileSync } from 'node:fs';
import { afterEach, describe, expect, it } from 'vitest';
import { ContextFold } from '../engine/context-fold.js';
import { isIntegrityCheckError } from '../protocol/ipcf-errors.js';
import { headFilePath } from '../store/records-head.js';
import type { Message } from './messages.js';
import { Session } from './session.js';
import { eventsPath, readEvents, type SessionEvent } from './session-events.js';
import { scratch, stepClock, unchained } from './test-utils/session-helpers.js';

const cleanups: (() => void)[] = [];
afterEach(() => {
  for (const c of cleanups.splice(0)) c();
});

const HISTORY: Message[] = [
  { role: 'system', content: 'You are a careful coding agent.' },
  { role: 'user', content: 'Run the migrations' },
  {
    role: 'assistant',
    content: 'Running them.',
    toolCalls: [{ id: 'c1', name: 'bash', input: { command: 'mix ecto.migrate' } }],
  },
  { role: 'tool', toolCallId: 'c1', toolName: 'bash', exitCode: 1, content: 'MigrationError' },
  { role: 'assistant', content: 'The migration fails.' },
  { role: 'user', content: 'Fix the billing_invoices migration' },
  { role: 'assistant', content: 'Fixed.' },
];

const options = (dir: string) => ({
  dir,
  budget: 20_000,
  keepRecent: 0,
  foldThreshold: 0,
  clock: stepClock(),
});

/** Records the history without a turn (no fold yet), closes; returns the store directory. */
async function recorded(): Promise<string> {
  const s = scratch();
  cleanups.push(s.cleanup);
  const session = await Session.open(options(s.dir));
  await session.append(HISTORY);
  await session.close();
  return s.dir;
}

/** Rewrites the log as a session recorded before the rule was unified wrote it. */
function asLegacy(dir: string): void {
  const path = eventsPath(dir);
  const text = readFileSync(path, 'utf8');
  expect(text).toContain('"step_ids":"turns"');
  writeFileSync(path, unchained(text).replace(',"step_ids":"turns"', ''));
  rmSync(headFilePath(path));
}

async function foldAll(dir: string): Promise<SessionEvent[]> {
  const session = await Session.open(options(dir));
  await session.beforeTurn('Which migration failed?');
  await session.afterTurn({ role: 'assistant', content: 'billing_invoices' });
  await session.close();
  return readEvents(dir);
}

const folds = (events: SessionEvent[]) =>
  events.flatMap((e) => (e.type === 'fold' ? [[e.step_id, e.steps] as const] : []));

describe('the step-id rule of a session (issue 15)', () => {
  it('a new session records step_ids "turns" and numbers its turns 0, 1, 2, … (a call and its result are one turn)', async () => {
    const dir = await recorded();
    const events = await foldAll(dir);
    const opened = events.find((e) => e.type === 'session_opened');
    expect(opened?.type === 'session_opened' && opened.config.step_ids).toBe('turns');
    expect(folds(events)).toEqual([
      [1, [1]],
      [2, [2, 3]],
      [3, [4]],
      [4, [5]],
      [5, [6]],
    ]);
    const cf = await ContextFold.open({ dir });
    const node = await cf.hydrate(2);
    expect(node.content).toBe(
      'Running them.\n[tool_use: bash id=c1]\n{\n "command": "mix ecto.migrate"\n}\n[tool_result: bash id=c1 exit=1]\nMigrationError',
    );
    expect((await cf.validate()).ok).toBe(true);
    await cf.close();
  });

  it('a session recorded before the rule keeps numbering by position and rendering as it did', async () => {
    const dir = await recorded();
    asLegacy(dir);
    const events = await foldAll(dir);
    for (const e of events) {
      if (e.type === 'session_opened') expect(e.config.step_ids).toBeUndefined();
    }
    expect(folds(events)).toEqual([
      [1, [1]],
      [2, [2, 3]],
      [4, [4]],
      [5, [5]],
      [6, [6]],
    ]);
    const cf = await ContextFold.open({ dir });
    expect((await cf.hydrate(2)).content).toMatch(
      /^\[assistant\]\nRunning them\.\n\[tool_call bash id=c1\]/,
    );
    await cf.close();
    // Reopening again changes nothing.
    const again = await Session.open(options(dir));
    expect(again.config.step_ids).toBeUndefined();
    await again.close();
  });

  it('refuses a log whose rule changes halfway (fail closed)', async () => {
    const dir = await recorded();
    asLegacy(dir);
    const opened = readEvents(dir).find((e) => e.type === 'session_opened')!;
    const changed = {
      ...opened,
      config: { ...(opened as { config: object }).config, step_ids: 'turns' },
    };
    writeFileSync(
      eventsPath(dir),
      `${readFileSync(eventsPath(dir), 'utf8')}${JSON.stringify(changed)}\n`,
    );
    const e = await Session.open(options(dir)).catch((x: unknown) => x);
    expect(isIntegrityCheckError(e)).toBe(true);
    expect((e as Error).message).toMatch(/changes its step-id rule from 'positions' to 'turns'/);
  });
});
