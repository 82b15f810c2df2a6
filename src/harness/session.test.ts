import { readdirSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { ContextFold } from '../engine/context-fold.js';
import { o200kTokenizer } from '../extract/tokenizer.js';
import { isUsageError } from '../protocol/errors.js';
import { isBrokenReferenceError, isIntegrityCheckError } from '../protocol/ipcf-errors.js';
import { type TestStore, testStore } from '../test-utils/backend-store.js';
import { BACKENDS, type BackendName } from '../test-utils/pg.js';
import { inspectColdNode, renderPackForHuman } from './inspect.js';
import type { Message } from './messages.js';
import { type ContextPack, renderPackText } from './pack.js';
import { renderMessage } from './render.js';
import { replaySession } from './replay.js';
import { Session } from './session.js';
import { parseEvents, type SessionEvent } from './session-events.js';
import { syntheticSession } from './synthetic.js';
import { drive, rechained, smallPolicy, stamped, stepClock } from './test-utils/session-helpers.js';

const tok = o200kTokenizer();

async function caught(p: Promise<unknown> | (() => unknown)): Promise<unknown> {
  try {
    await (typeof p === 'function' ? p() : p);
  } catch (e) {
    return e;
  }
  throw new Error('expected an error');
}

// Every suite runs on each backend: a session in a store directory, and one in a PostgreSQL
// store (its event log in cf_records, its nodes in cf_nodes). Edits behind the session's back go
// through the TestStore: the files, or the rows standing for them.
describe.each(BACKENDS)('%s', (backend: BackendName) => {
  /** A fresh store for the test: `dir` is what Session.open takes (a directory or a URL). */
  function store(): TestStore & { dir: string } {
    const s = testStore(backend, 'session');
    return Object.assign(s, { dir: s.where });
  }
  /** The session's event log as stored, checked like the file. */
  async function eventsOf(s: TestStore): Promise<SessionEvent[]> {
    return parseEvents(await s.readEventsText(), s.eventsPath());
  }

  describe('§4.2 rapid-fire recalls (CONF-07)', () => {
    it('turns 100–105 each page in a different old step; every next pack is back at baseline + δ', async () => {
      const { dir } = store();
      const session = await Session.open({
        dir,
        budget: 12_000,
        keepRecent: 6,
        policy: smallPolicy(1500, 2000),
        clock: stepClock(),
      });
      await session.append({ role: 'system', content: 'You are a careful coding agent.' });
      const script = syntheticSession({ turns: 100, outputLines: 80 });
      await drive(session, script);

      // Old turns whose tool output is long (edits and logs), asked about one after another.
      const recalled = [38, 89, 14, 64, 23, 73];
      const packs: ContextPack[] = [];
      const evicted: number[][] = [];
      const responses: Message[][] = [];
      for (let k = 100; k <= 105; k++) {
        const pack = await session.beforeTurn(
          `Quick question: what did marker${recalled[k - 100]} show?`,
        );
        packs.push(pack);
        const response: Message[] = [
          { role: 'assistant', content: `Turn ${recalled[k - 100]} changed the handler as shown.` },
        ];
        responses.push(response);
        evicted.push((await session.afterTurn(response)).evicted);
      }

      packs.forEach((p, i) => {
        expect(p.turn).toBe(100 + i);
        // Each turn pays for its own recall…
        expect(p.metadata.paged_in.length).toBeGreaterThan(0);
        expect(p.metadata.page_tokens).toBeGreaterThan(400);
        expect(p.tokens).toBe(p.metadata.baseline_tokens + p.metadata.page_tokens);
        expect(tok.count(renderPackText(p))).toBe(p.tokens);
        // …and the pages leave after the response.
        expect(evicted[i]).toEqual(p.metadata.paged_in.map((x) => x.step_id));
      });
      for (let i = 0; i + 1 < packs.length; i++) {
        const a = packs[i]!;
        const b = packs[i + 1]!;
        const text = renderPackText(b);
        for (const page of a.metadata.paged_in) {
          if (b.metadata.paged_in.some((x) => x.step_id === page.step_id)) continue;
          expect(text).not.toContain(`<archived_record step_id="${page.step_id}"`);
        }
        // δ: what the history gained between the two packs (the response and the new prompt).
        const delta =
          responses[i]!.reduce((n, m) => n + tok.count(renderMessage(m)), 0) +
          tok.count(
            renderMessage(b.messages[b.messages.length - 1]!).split('\n\n<archived_record')[0]!,
          ) +
          8;
        expect(b.metadata.baseline_tokens).toBeLessThanOrEqual(a.metadata.baseline_tokens + delta);
        // Not cumulative: carrying the previous turn's pages would cost more than δ.
        expect(delta).toBeLessThan(a.metadata.page_tokens);
        expect(b.metadata.baseline_tokens).toBeLessThan(
          a.metadata.baseline_tokens + a.metadata.page_tokens,
        );
      }
      const first = packs[0]!;
      const last = packs[5]!;
      const allPages = packs.reduce((n, p) => n + p.metadata.page_tokens, 0);
      expect(last.metadata.baseline_tokens - first.metadata.baseline_tokens).toBeLessThan(
        allPages - last.metadata.page_tokens,
      );
      // The store recorded every eviction.
      const entries = await session.engine.entries();
      for (const step of evicted.flat())
        expect(entries.find((e) => e.step_id === step)?.evicted).toBe(true);
      await session.close();
    }, 120_000);
  });

  describe('determinism', () => {
    it('two live runs under different clocks build the same packs when the history carries its times', async () => {
      const turns = stamped(syntheticSession({ turns: 40 })).map((t, i) =>
        i % 9 === 8
          ? {
              ...t,
              prompt: {
                ...t.prompt,
                content: `${t.prompt.content} What did marker${i - 20} show?`,
              },
            }
          : t,
      );
      const runs: { packs: ContextPack[]; s: TestStore }[] = [];
      for (const start of [Date.UTC(2025, 0, 1), Date.UTC(2030, 11, 31)]) {
        const s = store();
        const dir = s.dir;
        const session = await Session.open({
          dir,
          budget: 5000,
          keepRecent: 4,
          policy: smallPolicy(800, 1200),
          clock: stepClock(start, 7),
        });
        const packs = (await drive(session, turns)).map((r) => r.pack);
        await session.close();
        runs.push({ packs, s });
      }
      const [a, b] = runs as [(typeof runs)[0], (typeof runs)[0]];
      expect(a.packs.map(renderPackText)).toEqual(b.packs.map(renderPackText));
      const strip = async (s: TestStore) =>
        (await eventsOf(s)).map(({ recorded_at: _r, ...e }) => e);
      expect(await strip(a.s)).toEqual(await strip(b.s));
      expect(a.packs.some((p) => p.metadata.paged_in.length > 0)).toBe(true);
      // The clocks really differed: the cold nodes carry different fold times.
      const node = async (s: TestStore) => {
        const first = (await s.nodeSteps())[0]!;
        return JSON.parse((await s.readNode(first))!.toString('utf8')) as {
          folded_at: string;
          payload_sha256: string;
        };
      };
      expect((await node(a.s)).payload_sha256).toBe((await node(b.s)).payload_sha256);
      expect((await node(a.s)).folded_at).not.toBe((await node(b.s)).folded_at);
    }, 120_000);

    it('replay detects a log that does not match the policy or the store', async () => {
      const st = store();
      const dir = st.dir;
      const session = await Session.open({
        dir,
        budget: 3000,
        keepRecent: 3,
        policy: smallPolicy(600, 800),
        clock: stepClock(),
      });
      await drive(
        session,
        syntheticSession({ turns: 25 }).map((t, i) => ({
          ...t,
          prompt: i > 15 ? `${t.prompt} marker${i - 12}?` : t.prompt,
        })),
      );
      await session.close();
      expect((await replaySession({ dir })).matches).toBe(true);

      const original = await st.readEventsText();
      // A fold recorded for another reason than the policy gives.
      await st.writeEventsText(
        rechained(original.replace('"reason":"size"', '"reason":"high_water"')),
      );
      const r1 = await replaySession({ dir });
      expect(r1.matches).toBe(false);
      expect(r1.mismatch?.recorded).toContain('"reason":"high_water"');
      expect(r1.mismatch?.replayed).toContain('"reason":"size"');
      // A different policy in the log (keep_recent) changes the decisions.
      await st.writeEventsText(rechained(original.replace('"keep_recent":3', '"keep_recent":5')));
      expect((await replaySession({ dir })).matches).toBe(false);
      // A pack hash that is not what the pack is.
      await st.writeEventsText(
        rechained(original.replace(/"pack_sha256":"[0-9a-f]{6}/, '"pack_sha256":"000000')),
      );
      expect((await replaySession({ dir })).matches).toBe(false);
      // A cold node rewritten on disk: replay refuses to page it in.
      await st.writeEventsText(original);
      expect((await replaySession({ dir })).matches).toBe(true);
      const paged = (await eventsOf(st)).find((e) => e.type === 'page_in');
      expect(paged).toBeDefined();
      await st.editNode((paged as { step_id: number }).step_id, (t) =>
        t.replace('"raw_content": "', '"raw_content": "X'),
      );
      expect(isIntegrityCheckError(await caught(replaySession({ dir })))).toBe(true);
    }, 120_000);
  });

  describe('inspection never changes the next pack (CONF-08)', () => {
    it('rendering a pack and a cold node for a person writes nothing and changes no token', async () => {
      const turns = stamped(syntheticSession({ turns: 30 }));
      const packsOf = async (inspect: boolean): Promise<string[]> => {
        const st = store();
        const session = await Session.open({
          dir: st.dir,
          budget: 4000,
          keepRecent: 4,
          policy: smallPolicy(600, 900),
        });
        const out: string[] = [];
        await drive(session, turns, async (i, pack) => {
          out.push(renderPackText(pack));
          if (!inspect || i % 5 !== 4) return;
          const before = await st.fingerprint();
          const view = renderPackForHuman(pack);
          expect(view).toContain(`${pack.tokens}/${pack.budget} tokens`);
          const step = pack.metadata.l2_steps[0] ?? (await session.engine.entries())[0]!.step_id;
          const node = await inspectColdNode(session.engine, step);
          expect(node).toContain(`step ${step}`);
          expect(node).toContain('verified');
          await session.engine.status();
          await session.engine.validate();
          expect(await st.fingerprint()).toEqual(before);
        });
        await session.close();
        return out;
      };
      const plain = await packsOf(false);
      const inspected = await packsOf(true);
      expect(inspected).toEqual(plain);
      expect(plain.length).toBe(30);
    }, 120_000);
  });

  describe('failure handling', () => {
    it('a page that fails verification is not paged in: event and warning, the turn proceeds', async () => {
      const st = store();
      const dir = st.dir;
      const session = await Session.open({
        dir,
        budget: 4000,
        keepRecent: 2,
        foldThreshold: 0,
        policy: smallPolicy(800, 1200),
        clock: stepClock(),
      });
      await drive(session, syntheticSession({ turns: 12 }));
      const target = (await session.engine.recall('marker3')).candidates[0]!.step_id;
      await st.editNode(target, (t) => t.replace('marker3', 'marker4'));

      const pack = await session.beforeTurn('What did marker3 show?');
      expect(pack.metadata.paged_in.map((p) => p.step_id)).not.toContain(target);
      expect(pack.metadata.page_failures).toMatchObject([
        { step_id: target, error: 'IntegrityCheckError' },
      ]);
      expect(pack.metadata.warnings[0]).toMatch(
        new RegExp(`^page-in of step ${target} refused \\(IntegrityCheckError`),
      );
      expect(renderPackText(pack)).not.toContain(`<archived_record step_id="${target}"`);
      const r = await session.afterTurn({
        role: 'assistant',
        content: 'I could not verify that step.',
      });
      expect(r.evicted).not.toContain(target);
      expect((await eventsOf(st)).filter((e) => e.type === 'page_failed')).toMatchObject([
        { step_id: target, code: 'INTEGRITY_CHECK' },
      ]);
      // The session goes on.
      const next = await session.beforeTurn('Carry on with the billing handler.');
      expect(next.turn).toBe(13);
      await session.afterTurn();
      await session.close();
    }, 60_000);

    it('refuses to reopen a session whose log is torn or whose folds are missing from the store', async () => {
      const st = store();
      const dir = st.dir;
      const session = await Session.open({ dir, budget: 3000, keepRecent: 2, foldThreshold: 0 });
      await drive(session, syntheticSession({ turns: 6 }));
      await session.close();
      const path = st.eventsPath();
      const original = await st.readEventsText();

      // An interrupted write: a torn last line in the file; in the database (where a record is
      // a row, written whole or not at all) the same bytes as a row of their own.
      const tornText = '{"type":"append","fro';
      await st.writeEventsText(
        backend === 'local' ? original + tornText : `${original}${tornText}\n`,
      );
      const torn = await caught(Session.open({ dir, budget: 3000 }));
      expect(isIntegrityCheckError(torn)).toBe(true);
      const why = backend === 'local' ? 'is incomplete' : 'is not valid JSON';
      expect((torn as Error).message).toMatch(
        new RegExp(`^${path.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')} line \\d+ ${why}`),
      );

      await st.writeEventsText(original);
      const cf = await ContextFold.open({ dir });
      const folded = (await cf.entries()).map((e) => e.step_id);
      await cf.close();
      // Point the log at a store that lacks the folds.
      const other = store();
      expect(folded.length).toBeGreaterThan(0);
      await other.writeEventsText(original);
      const missing = await caught(Session.open({ dir: other.dir, budget: 3000 }));
      expect(isBrokenReferenceError(missing)).toBe(true);
      expect((missing as Error).message).toMatch(
        /the session log says step \d+ is folded, but the store has no such node/,
      );
    }, 60_000);
  });

  describe('a log line that does not fit the session', () => {
    it('is refused naming the log and its line, on reopen and on replay', async () => {
      const st = store();
      const dir = st.dir;
      const session = await Session.open({ dir, budget: 3000, keepRecent: 2, foldThreshold: 0 });
      await drive(
        session,
        syntheticSession({ turns: 8 }).map((t, i) => ({
          ...t,
          prompt: i === 7 ? `${t.prompt} marker1?` : t.prompt,
        })),
      );
      await session.close();
      const path = st.eventsPath();
      const original = await st.readEventsText();
      const lines = original.split('\n');
      const at = (n: number) =>
        new RegExp(`^${path.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')} line ${n}: `);

      // An append line written twice.
      const dup = lines.findIndex((l) => l.includes('"type":"append"') && !l.includes('"from":0,'));
      await st.writeEventsText(
        rechained([...lines.slice(0, dup + 1), ...lines.slice(dup)].join('\n')),
      );
      for (const err of [
        await caught(Session.open({ dir, budget: 3000, keepRecent: 2, foldThreshold: 0 })),
        await caught(replaySession({ dir })),
      ]) {
        expect(isIntegrityCheckError(err)).toBe(true);
        expect((err as Error).message).toMatch(at(dup + 2));
      }

      // A log without its session_opened (its config): refused, not reopened with a new one.
      await st.writeEventsText(rechained(lines.slice(1).join('\n')));
      for (const err of [
        await caught(Session.open({ dir, budget: 3000, keepRecent: 2, foldThreshold: 0 })),
        await caught(replaySession({ dir })),
      ]) {
        expect(isIntegrityCheckError(err)).toBe(true);
        expect((err as Error).message).toMatch(at(1));
      }

      // A page-in of a step that was never folded.
      const page = lines.findIndex((l) => l.includes('"type":"page_in"'));
      expect(page).toBeGreaterThan(0);
      const edited = [...lines];
      edited[page] = edited[page]!.replace(/"step_id":\d+/, '"step_id":999');
      await st.writeEventsText(rechained(edited.join('\n')));
      const err = await caught(replaySession({ dir }));
      expect((err as Error).message).toMatch(at(page + 1));
      expect((err as { details: { line: number } }).details.line).toBe(page + 1);
    }, 60_000);
  });

  describe('the turn lifecycle', () => {
    it('resumes from its log: a reopened session builds the same packs as an uninterrupted one', async () => {
      const turns = stamped(syntheticSession({ turns: 36 }));
      const options = { budget: 4000, keepRecent: 4, policy: smallPolicy(700, 1000) };
      const a = store();
      const whole = await Session.open({ dir: a.dir, ...options });
      const expected = (await drive(whole, turns)).map((r) => renderPackText(r.pack));
      await whole.close();

      const b = store();
      let s = await Session.open({ dir: b.dir, ...options });
      const got = (await drive(s, turns.slice(0, 17))).map((r) => renderPackText(r.pack));
      await s.close();
      s = await Session.open({ dir: b.dir, ...options });
      expect(s.status()).toMatchObject({ turns_started: 17, open_turn: null });
      got.push(...(await drive(s, turns.slice(17))).map((r) => renderPackText(r.pack)));
      await s.close();
      expect(got).toEqual(expected);
    }, 120_000);

    it('strips archived blocks a client sends back, so pages are never stored or folded again', async () => {
      const st = store();
      const dir = st.dir;
      const session = await Session.open({
        dir,
        budget: 4000,
        keepRecent: 2,
        foldThreshold: 0,
        policy: smallPolicy(800, 1200),
      });
      await drive(session, syntheticSession({ turns: 8 }));
      const pack = await session.beforeTurn('What did marker2 show?');
      expect(pack.metadata.paged_in.length).toBeGreaterThan(0);
      await session.afterTurn({ role: 'assistant', content: 'It showed the handler.' });
      const echoed = pack.messages[pack.messages.length - 1]!;
      expect(echoed.content).toContain('<archived_record');
      const [step] = await session.append({ role: 'user', content: echoed.content });
      expect(session.history()[step!]!.content).toBe('What did marker2 show?');
      const ev = (await eventsOf(st)).filter((e) => e.type === 'append').at(-1)!;
      expect(ev.type === 'append' && ev.stripped).toEqual([
        {
          step_id: step,
          blocks: pack.metadata.paged_in.map((p) => ({
            step_id: p.step_id,
            payload_sha256: p.payload_sha256,
          })),
        },
      ]);
      await session.close();
    }, 60_000);

    it('uses a custom async summariser for folds; replay reuses its recorded output', async () => {
      const st = store();
      const dir = st.dir;
      let calls = 0;
      const session = await Session.open({
        dir,
        budget: 3000,
        keepRecent: 2,
        foldThreshold: 0,
        summarize: async (t) => {
          calls++;
          return `LLM summary of step ${t.stepId} (${t.facts.action_type}) ${'x'.repeat(400)}`;
        },
      });
      const packs = (await drive(session, syntheticSession({ turns: 8 }))).map((r) => r.pack);
      await session.close();
      expect(calls).toBeGreaterThan(5);
      const folds = (await eventsOf(st)).filter((e) => e.type === 'fold');
      for (const f of folds) {
        if (f.type !== 'fold') continue;
        expect(f.summary_source).toBe('custom');
        expect(f.record.summary.startsWith(`LLM summary of step ${f.step_id} (`)).toBe(true);
        expect(Array.from(f.record.summary).length).toBe(280);
      }
      const cf = await ContextFold.open({ dir });
      expect((await cf.entries())[0]!.summary).toMatch(/^LLM summary of step/);
      await cf.close();
      const before = calls;
      const r = await replaySession({ dir });
      expect(r.matches).toBe(true);
      expect(r.packs.map(renderPackText)).toEqual(packs.map(renderPackText));
      expect(calls).toBe(before);
    }, 60_000);

    it('refuses a custom summary that is empty, only whitespace or not a string', async () => {
      for (const [out, said] of [
        ['', 'an empty summary for step 0 (an empty string)'],
        [' \n\t\u00a0', 'an empty summary for step 0 (only whitespace)'],
        [null, 'returned null for step 0'],
        [7, 'returned number for step 0'],
      ] as const) {
        const st = store();
        const session = await Session.open({
          dir: st.dir,
          budget: 3000,
          keepRecent: 0,
          foldThreshold: 0,
          summarize: () => out as string,
        });
        await session.beforeTurn('first question');
        await session.afterTurn({ role: 'assistant', content: 'an answer' });
        const err = await session.beforeTurn('next').catch((e: unknown) => e);
        expect(isUsageError(err)).toBe(true);
        expect((err as Error).message).toContain(said);
        await session.close();
        // Nothing of the failed turn was recorded: no fold with an empty summary.
        const folds = (await eventsOf(st)).filter((e) => e.type === 'fold');
        expect(folds).toEqual([]);
      }
    }, 60_000);

    it('a tool-loop continuation without a prompt puts the pending tool output in L0', async () => {
      const { dir } = store();
      const session = await Session.open({ dir, budget: 3000 });
      await session.beforeTurn('List the files.');
      await session.afterTurn({
        role: 'assistant',
        content: '',
        toolCalls: [{ id: 't1', name: 'bash', input: { command: 'ls' } }],
      });
      await session.append({
        role: 'tool',
        toolCallId: 't1',
        toolName: 'bash',
        content: 'a.ts\nb.ts',
        exitCode: 0,
      });
      const pack = await session.beforeTurn();
      const l0 = pack.entries.filter((e) => e.layer === 'L0');
      expect(l0).toMatchObject([{ kind: 'pending_tool_output', step_id: 1, steps: [1, 2] }]);
      expect(pack.metadata.paged_in).toEqual([]);
      expect(pack.messages.at(-1)).toMatchObject({ role: 'tool', toolCallId: 't1' });
      await session.afterTurn({ role: 'assistant', content: 'Two files.' });
      await session.close();
    });

    it('refuses misuse with one clear line and stays usable', async () => {
      const { dir } = store();
      expect(isUsageError(await caught(Session.open({ dir } as never)))).toBe(true);
      // An unknown or misspelt option is refused (it was ignored: the default applied).
      const unknown = await caught(Session.open({ dir, budget: 3000, keepRecnt: 2 } as never));
      expect(isUsageError(unknown)).toBe(true);
      expect((unknown as Error).message).toMatch(
        /^Session\.open has no option 'keepRecnt' \(options: dir, budget, .*keepRecent/,
      );
      expect(
        ((await caught(Session.open({ dir, budget: 100, pageReserve: 100 }))) as Error).message,
      ).toMatch(/pageReserve/);
      const session = await Session.open({ dir, budget: 3000 });
      const cases: [() => Promise<unknown>, RegExp][] = [
        [() => session.afterTurn(), /no turn is open/],
        [
          () => session.append({ role: 'tool', toolCallId: 'nope', content: 'x' }),
          /^message 0: tool result answers call id 'nope'/,
        ],
        [
          () =>
            session.append([
              { role: 'user', content: 'ok' },
              { role: 'bot', content: 'x' } as never,
            ]),
          /^message 1: invalid message: role/,
        ],
        [
          () => session.beforeTurn({ role: 'assistant', content: 'x' } as never),
          /string or a \{ role: "user" \} message/,
        ],
        [() => session.pin('  '), /non-empty/],
        // A misspelt option was ignored: the note pinned without its source.
        [() => session.pin('note', { sorce: 'x' } as never), /^pin has no option 'sorce'/],
      ];
      for (const [fn, re] of cases) {
        const e = await caught(fn);
        expect(isUsageError(e)).toBe(true);
        expect((e as Error).message).toMatch(re);
      }
      expect(session.history()).toEqual([]);
      await session.beforeTurn('hello');
      expect(((await caught(session.beforeTurn('again'))) as Error).message).toMatch(
        /turn 0 is still open/,
      );
      await session.afterTurn({ role: 'assistant', content: 'hi' });
      expect(session.history().map((m) => m.stepId)).toEqual([0, 1]);
      await session.close();
      const other = await caught(Session.open({ dir, budget: 3000, tokenizer: 'reference' }));
      expect((other as Error).message).toMatch(/recorded with the 'o200k' tokenizer/);
    });
  });

  describe('Session engine options', () => {
    it('keeps ranked analyses in the store, whatever cacheDir says (nothing outside the store)', async () => {
      const history: Message[] = [
        { role: 'user', content: 'run the migrations' },
        {
          role: 'assistant',
          content: Array.from({ length: 60 }, (_, i) => `migration ${i} ok`).join('\n'),
        },
      ];
      for (const cacheDir of [undefined, false, 'cache'] as const) {
        const { root, dir } = store();
        const session = await Session.open({
          dir,
          budget: 4000,
          foldThreshold: 8,
          keepRecent: 0,
          ...(cacheDir === undefined ? {} : { cacheDir: cacheDir && join(root, cacheDir) }),
        });
        await session.append(history);
        await session.beforeTurn('which migration?');
        await session.afterTurn({ role: 'assistant', content: 'ok' });
        const status = await session.engine.status();
        expect(status.nodes).toBeGreaterThan(0);
        expect(status.index?.pending_analysis).toBe(0);
        await session.close();
        // Nothing beside the store: the store directory itself, or (a database store) nothing.
        expect(readdirSync(root)).toEqual(backend === 'local' ? ['.contextfold'] : []);
      }
    });

    it('an engine that is no engine, or a pageInToolOutput that is no boolean, is one usage error', async () => {
      // Before, { engine: {} } failed with a TypeError reading the policy of undefined, and
      // pageInToolOutput: 'no' turned the tool-output scan on.
      const { dir } = store();
      for (const bad of [{ engine: {} }, { engine: null }, { pageInToolOutput: 'no' }]) {
        const e = await caught(Session.open({ dir, budget: 4000, ...(bad as object) }));
        expect(isUsageError(e)).toBe(true);
      }
    });
  });
});
