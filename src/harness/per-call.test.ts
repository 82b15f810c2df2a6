import { cpSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { afterEach, describe, expect, it } from 'vitest';
import { isUsageError } from '../protocol/errors.js';
import { isIntegrityCheckError } from '../protocol/ipcf-errors.js';
import type { HistoryRecord, Message } from './messages.js';
import { renderPackText } from './pack.js';
import {
  beginCall,
  type CallReport,
  callReport,
  continuation,
  divergence,
  endCall,
  modelCalls,
  runPerCall,
} from './per-call.js';
import { replaySession } from './replay.js';
import { Session } from './session.js';
import { eventsPath, readEvents } from './session-events.js';
import { syntheticSession } from './synthetic.js';
import { scratch, stepClock, unchained } from './test-utils/session-helpers.js';

const cleanups: (() => void)[] = [];
afterEach(() => {
  for (const c of cleanups.splice(0)) c();
});

function store(): string {
  const s = scratch();
  cleanups.push(s.cleanup);
  return s.dir;
}

/** A flat history (turns-file form): prompts, tool calls and their outputs, plain text. */
function flatHistory(turns: number): Message[] {
  const out: Message[] = [];
  for (const t of syntheticSession({ turns })) {
    out.push({ role: 'user', content: t.prompt });
    for (const m of t.response) {
      if (m.role === 'assistant')
        out.push({ role: 'assistant', content: `${m.content}\n[tool_use: bash id=x]` });
      else out.push({ role: m.role, content: m.content } as Message);
    }
  }
  return out;
}

const open = (dir: string, budget = 3000) =>
  Session.open({ dir, budget, keepRecent: 2, pageInToolOutput: true, clock: stepClock() });

describe('modelCalls', () => {
  it('puts a call before every run of assistant messages, never at the start', () => {
    const roles = [
      'assistant',
      'user',
      'assistant',
      'assistant',
      'tool',
      'assistant',
      'tool',
      'user',
    ];
    expect(modelCalls(roles.map((role) => ({ role })))).toEqual([2, 5]);
  });
});

describe('divergence', () => {
  const a: Message = { role: 'user', content: 'hi' };
  const b: Message = { role: 'assistant', content: 'hello' };
  it('is null when the stored history is a prefix, else the first differing position', () => {
    expect(divergence([a], [a, b])).toBeNull();
    expect(divergence([a, b], [a, b])).toBeNull();
    expect(divergence([a, b], [a])).toBe(1);
    expect(divergence([a, b], [a, { role: 'assistant', content: 'hey' }])).toBe(1);
    expect(divergence([a], [{ role: 'system', content: 'hi' }])).toBe(0);
    expect(divergence([a], [{ ...a, timestamp: '2025-01-01T00:00:00Z' }])).toBeNull();
    expect(divergence([b], [{ ...b, toolCalls: [{ id: 'c', name: 'n', input: 1 }] }])).toBe(0);
  });
});

describe('beginCall / endCall', () => {
  it('appends only what is new, pages in for the live prompt, evicts at the end (CONF-07)', async () => {
    const dir = store();
    const session = await open(dir);
    const history = flatHistory(30);
    const ask = history.findIndex((m, i) => i > 60 && m.role === 'user');
    const upTo = [
      ...history.slice(0, ask),
      { role: 'user', content: 'What did marker3 show?' } as Message,
    ];
    const pack = await beginCall(session, upTo);
    expect(session.status().history_length).toBe(upTo.length);
    expect(pack.metadata.paged_in.length).toBeGreaterThan(0);
    expect(pack.entries.find((e) => e.layer === 'L0')?.kind).toBe('prompt');
    const report = callReport(session, pack);
    expect(report.history_tokens).toBe(session.historyTokens());
    expect(report.history_tokens).toBeGreaterThan(report.pack_tokens);
    const paged = pack.metadata.paged_in.map((p) => p.step_id);
    expect(await endCall(session)).toEqual(paged);
    expect(await endCall(session)).toEqual([]);

    // The next call carries none of those pages.
    const next = await beginCall(session, [
      ...upTo,
      { role: 'assistant', content: 'It showed 42.' },
      { role: 'user', content: 'Thanks.' },
    ]);
    expect(renderPackText(next)).not.toContain('<archived_record ');
    await endCall(session);
    await session.close();
  });

  it('a retried call (same history) rebuilds the same pack for the same live prompt', async () => {
    const session = await open(store());
    const history = [
      ...flatHistory(12),
      { role: 'user', content: 'What did marker2 show?' } as Message,
    ];
    const first = await beginCall(session, history);
    expect(first.metadata.paged_in.length).toBeGreaterThan(0);
    await endCall(session);
    const again = await beginCall(session, history);
    await endCall(session);
    expect(renderPackText(again)).toBe(renderPackText(first));
    expect(again.metadata.paged_in).toEqual(first.metadata.paged_in);
    await session.close();
  });

  it('a tool-loop continuation scans the pending tool output and pages in after it', async () => {
    const session = await open(store());
    const history = flatHistory(20);
    const withOutput: Message[] = [
      ...history,
      { role: 'assistant', content: 'Checking.\n[tool_use: bash id=y]' },
      { role: 'tool', content: 'grep found marker1 and marker4 again' },
    ];
    const pack = await beginCall(session, withOutput);
    expect(pack.entries.find((e) => e.layer === 'L0')?.kind).toBe('pending_tool_output');
    expect(pack.metadata.paged_in.length).toBeGreaterThan(0);
    const last = pack.messages.at(-1)!;
    expect(last.role).toBe('tool');
    expect(
      last.content.startsWith('grep found marker1 and marker4 again\n\n<archived_record '),
    ).toBe(true);
    await endCall(session);
    await session.close();
  });

  it('refuses a history that does not continue the session, without writing', async () => {
    const dir = store();
    const session = await open(dir);
    await beginCall(session, [{ role: 'user', content: 'one' }]);
    await endCall(session);
    const before = readEvents(dir).length;
    const e = await beginCall(session, [{ role: 'user', content: 'two' }]).catch((x: unknown) => x);
    expect(isUsageError(e)).toBe(true);
    expect((e as Error).message).toMatch(/message 0 differs/);
    expect(readEvents(dir)).toHaveLength(before);
    await session.close();
  });

  it('never builds a pack over budget because of pages: what does not fit is refused and reported', async () => {
    const session = await Session.open({
      dir: store(),
      budget: 1200,
      keepRecent: 1,
      pageInToolOutput: true,
    });
    const history = flatHistory(16);
    const huge = `marker2 marker3 marker5 ${'x '.repeat(700)}`;
    const pack = await beginCall(session, [...history, { role: 'user', content: huge }]);
    expect(pack.metadata.over_budget).toBe(false);
    expect(pack.tokens).toBeLessThanOrEqual(1200);
    expect(pack.metadata.page_failures.some((f) => f.code === 'PAGE_BUDGET')).toBe(true);
    await endCall(session);
    await session.close();
  });
});

describe('runPerCall', () => {
  it('builds a pack before every model call and matches driving beginCall by hand', async () => {
    const history = flatHistory(15);
    const records: HistoryRecord[] = history.map((m, i) => ({
      step_id: i,
      role: m.role,
      content: m.content,
    }));
    const rows: CallReport[] = [];
    const a = await open(store());
    const totals = await runPerCall(a, records, (r) => rows.push(r));
    await a.close();
    expect(rows).toHaveLength(modelCalls(history).length);
    expect(totals.calls).toBe(rows.length);
    expect(totals.sent_tokens).toBe(rows.reduce((n, r) => n + r.pack_tokens, 0));
    expect(totals.history_tokens).toBe(rows.reduce((n, r) => n + r.history_tokens, 0));
    expect(totals.sent_ratio).toBeLessThan(1);

    const dirB = store();
    const b = await open(dirB);
    const byHand: CallReport[] = [];
    for (const at of modelCalls(history)) {
      const report = callReport(b, await beginCall(b, history.slice(0, at)));
      report.evicted = await endCall(b);
      byHand.push(report);
    }
    await b.close();
    expect(byHand).toEqual(rows);
    expect((await replaySession({ dir: dirB })).matches).toBe(true);
  });

  it('needs a whole history and a new session', async () => {
    const dir = store();
    const s = await open(dir);
    const records: HistoryRecord[] = [{ step_id: 3, role: 'user', content: 'x' }];
    await expect(runPerCall(s, records, () => undefined)).rejects.toThrow(/start at step 3, not 0/);
    await s.append({ role: 'user', content: 'x' });
    await expect(
      runPerCall(s, [{ step_id: 0, role: 'user', content: 'x' }], () => undefined),
    ).rejects.toThrow(/fresh --dir/);
    await s.close();
  });
});

describe("a changed system prompt (the app's current instructions, not a turn)", () => {
  const sys = (content: string): Message => ({ role: 'system', content });
  const u: Message = { role: 'user', content: 'hi' };
  const a: Message = { role: 'assistant', content: 'hello' };

  it('continuation: a leading system message may change while the rest continues, not one midway', () => {
    expect(continuation([sys('day 1'), u, a], [sys('day 2'), u, a, u])).toEqual({
      at: null,
      system: [0],
    });
    expect(continuation([sys('x'), sys('y'), u], [sys('x'), sys('z'), u])).toEqual({
      at: null,
      system: [1],
    });
    // The rest must still continue: nothing is taken then.
    expect(continuation([sys('day 1'), u, a], [sys('day 2'), u, u])).toEqual({
      at: 2,
      system: [],
    });
    expect(continuation([u, sys('rule 1'), a], [u, sys('rule 2'), a])).toEqual({
      at: 1,
      system: [],
    });
    expect(continuation([sys('day 1'), u], [u, u])).toEqual({ at: 0, system: [] });
  });

  it('beginCall goes on in the same session with the new text: redacted, recorded, replayed byte for byte', async () => {
    const dir = store();
    const session = await open(dir);
    const history = flatHistory(20);
    const first = [sys('Today is 2026-12-05.'), ...history, u];
    const p1 = await beginCall(session, first);
    expect(p1.metadata.folded.length).toBeGreaterThan(0);
    await endCall(session);
    const secret = 'sk-proj-test-Hs2Lq9Vn4Xc7Tb1Mz5Kw8Pd3';
    const second = [
      sys(`Today is 2026-12-06. Key ${secret}`),
      ...history,
      u,
      a,
      { role: 'user', content: 'What did marker3 show?' } as Message,
    ];
    const folded = session.status().folded;
    const p2 = await beginCall(session, second);
    await endCall(session);
    expect(p2.messages[0]).toEqual({
      role: 'system',
      content: 'Today is 2026-12-06. Key [REDACTED:openai-api-key]',
    });
    expect(renderPackText(p2)).not.toContain('2026-12-05');
    // The archived turns stay in this session: only the turn that just aged is folded.
    expect(session.status().history_length).toBe(second.length);
    expect(session.status().folded).toBeLessThanOrEqual(folded + 1);
    expect(session.history()[0]!.content).toBe(p2.messages[0]!.content);
    const changed = readEvents(dir).filter((e) => e.type === 'system_changed');
    expect(changed).toMatchObject([{ step_id: 0, content: p2.messages[0]!.content }]);
    expect(readFileSync(eventsPath(dir), 'utf8')).not.toContain(secret);
    // The same history again changes nothing more.
    await beginCall(session, second);
    await endCall(session);
    expect(readEvents(dir).filter((e) => e.type === 'system_changed')).toHaveLength(1);
    await session.close();

    const replay = await replaySession({ dir });
    expect(replay.mismatch).toBeNull();
    expect(renderPackText(replay.packs[1]!)).toBe(renderPackText(p2));
    const again = await open(dir);
    expect(again.history()[0]!.content).toBe(p2.messages[0]!.content);
    await again.close();
  });

  it('a system message midway must stay as it was', async () => {
    const dir = store();
    const session = await open(dir);
    await beginCall(session, [u, sys('rule 1'), a, u]);
    await endCall(session);
    const e = await beginCall(session, [u, sys('rule 2'), a, u, a, u]).catch((x: unknown) => x);
    expect(isUsageError(e)).toBe(true);
    expect((e as Error).message).toMatch(
      /message 1 differs from its recorded message 1 \(a system message after the first other message must stay as it was\)/,
    );
    await session.close();
  });

  it('a system prompt added or removed within a session is refused, saying so', async () => {
    const session = await open(store());
    await beginCall(session, [sys('day 1'), u]);
    await endCall(session);
    for (const history of [
      [u, a, u],
      [sys('day 1'), sys('extra'), u, a, u],
    ]) {
      const e = await beginCall(session, history).catch((x: unknown) => x);
      expect(isUsageError(e)).toBe(true);
      expect((e as Error).message).toMatch(
        /\(the system prompt: its text may change from call to call, but a system message cannot be added or removed within a session; start a new session for that\)/,
      );
    }
    await session.close();
  });

  it('a session log written before system_changed replays, and goes on with a changed system prompt', async () => {
    // Recorded by contextfold proxy before the change: an Anthropic conversation with one fold.
    const dir = store();
    cpSync(new URL('./fixtures/session-before-system-changed', import.meta.url), dir, {
      recursive: true,
    });
    expect((await replaySession({ dir })).mismatch).toBeNull();
    const session = await Session.open({
      dir,
      budget: 1500,
      keepRecent: 2,
      foldThreshold: 64,
      tokenizer: 'reference',
    });
    const history = session.history();
    expect(history[0]).toMatchObject({ role: 'system', content: 'Today is 2026-12-05.' });
    const pack = await beginCall(session, [
      sys('Today is 2026-12-06.'),
      ...history.slice(1).map((m) => ({ role: m.role, content: m.content }) as Message),
      { role: 'assistant', content: 'ok' },
      { role: 'user', content: 'Which port does the database use?' },
    ]);
    await endCall(session);
    expect(pack.messages[0]!.content).toBe('Today is 2026-12-06.');
    expect(pack.metadata.paged_in.map((p) => p.step_id)).toEqual([2]);
    await session.close();
    const replay = await replaySession({ dir });
    expect(replay.mismatch).toBeNull();
    expect(replay.packs).toHaveLength(2);
  });

  it('a system_changed event that does not fit the history is refused with its line', async () => {
    const dir = store();
    const session = await open(dir);
    await beginCall(session, [sys('day 1'), u]);
    await endCall(session);
    await beginCall(session, [sys('day 2'), u, a, u]);
    await endCall(session);
    await session.close();
    const text = unchained(readFileSync(eventsPath(dir), 'utf8'));
    rmSync(`${eventsPath(dir)}.head`);
    const line = text.split('\n').findIndex((l) => l.includes('"system_changed"')) + 1;
    const at = '"step_id":0,"content"';
    for (const [from, to, why] of [
      [at, '"step_id":1,"content"', /step 1, but message 1 is not one of the leading system/],
      [at, '"step_id":9,"content"', /step 9, but the history has 2 messages/],
      ['"content":"day 2"', '"content":2', /not a valid system_changed event/],
    ] as const) {
      writeFileSync(eventsPath(dir), text.replace(from, to));
      const e = await open(dir).catch((x: unknown) => x);
      expect(isIntegrityCheckError(e)).toBe(true);
      expect((e as Error).message).toContain(`line ${line}`);
      expect((e as Error).message).toMatch(why);
    }
  });
});
