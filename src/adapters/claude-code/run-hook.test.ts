import {
  appendFileSync,
  copyFileSync,
  existsSync,
  mkdirSync,
  readFileSync,
  rmSync,
  statSync,
  writeFileSync,
} from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { ContextFold } from '../../engine/context-fold.js';
import { summarizeTurn } from '../../harness/summarize.js';
import { parseClaudeCodeTranscript } from '../../import/claude-code-transcript.js';
import { TranscriptWriter } from '../../test-utils/claude-transcript.js';
import { tempDir } from '../../test-utils/temp-dir.js';
import { CONTEXT_HEADER, MAX_CONTEXT_BYTES } from './archived-context.js';
import type { HookEvent, HookInput } from './hook-input.js';
import { ingestTranscript, RECENT_UUIDS, uuidLogPath } from './ingest.js';
import { HookEngines, runHook } from './run-hook.js';
import { MAX_SCANNED_PROMPT_CHARS } from './scanned-prompt.js';
import { sessionPaths } from './session-paths.js';

const SESSION = '0dd5e551-0000-4000-8000-00000000beef';
const fixture = new URL('../../import/fixtures/claude-code-session.jsonl', import.meta.url)
  .pathname;

function setup() {
  const root = tempDir().dir;
  const transcript = join(root, `${SESSION}.jsonl`);
  const baseDir = join(root, '.contextfold');
  const run = (event: HookEvent, extra: Partial<HookInput> = {}, maxTurnsPerRun?: number) =>
    runHook({
      event,
      baseDir,
      input: { session_id: SESSION, transcript_path: transcript, cwd: root, ...extra },
      ...(maxTurnsPerRun ? { maxTurnsPerRun } : {}),
    });
  const store = sessionPaths(baseDir, SESSION).storeDir;
  const entries = async () => {
    const cf = await ContextFold.open({ dir: store });
    try {
      return await cf.entries();
    } finally {
      await cf.close({ compact: false });
    }
  };
  /** The entries but for the fold time (and the node hash that covers it): two runs compare. */
  const timeless = async () =>
    (await entries()).map(({ folded_at, artifact_sha256, ...rest }) => rest);
  return { root, transcript, baseDir, run, store, entries, timeless };
}

/** A session with a long history, a compaction, then more work. */
function session(): TranscriptWriter {
  const w = new TranscriptWriter(SESSION);
  w.user('Set PostgreSQL to port 5433 in config/database.yml');
  w.assistant('Editing the config.', [
    {
      name: 'Edit',
      input: { file_path: 'config/database.yml', old_string: '5432', new_string: '5433' },
      result: 'updated',
    },
  ]);
  w.progress();
  w.assistant('', [
    {
      name: 'Bash',
      input: { command: 'mix ecto.migrate' },
      result: 'MigrationError: billing_invoices exists',
      isError: true,
    },
  ]);
  w.assistant('Port 5433 is set; the billing_invoices migration fails.');
  w.user('Now write the README section about deployment');
  w.assistant('Done: README.md has a deployment section.');
  w.compact('Summary: port 5433, migration failing, README written.');
  w.user('Continue with the dashboard');
  w.assistant('Working on the dashboard.', [
    {
      name: 'Read',
      input: { file_path: 'lib/dashboard.ex' },
      result: 'defmodule Dashboard do\nend',
    },
  ]);
  return w;
}

describe('runHook user-prompt-submit', () => {
  it('pages in verified records from before the compaction, labelled as archived data', async () => {
    const s = setup();
    writeFileSync(s.transcript, session().text());
    const out = await s.run('user-prompt-submit', {
      prompt: 'Which MigrationError did mix ecto.migrate print?',
    });
    expect(out.archived_before).toBe(6);
    expect(out.output?.hookSpecificOutput?.hookEventName).toBe('UserPromptSubmit');
    const ctx = out.output!.hookSpecificOutput!.additionalContext;
    expect(ctx.startsWith(CONTEXT_HEADER)).toBe(true);
    const expected = parseClaudeCodeTranscript(session().text(), 't').turns.find((t) =>
      t.content.includes('MigrationError'),
    )!;
    expect(expected.step_id).toBeLessThan(6);
    expect(ctx).toContain(`<archived_record step_id="${expected.step_id}"`);
    expect(ctx).toContain(`${expected.content}\n</archived_record`);
    expect(Buffer.byteLength(ctx)).toBeLessThanOrEqual(MAX_CONTEXT_BYTES);
  });

  it('pages in nothing before the first compaction (everything is still in the live context)', async () => {
    const s = setup();
    const w = session();
    const upToCompaction = w.rows.findIndex((r) => r.includes('compact_boundary'));
    writeFileSync(s.transcript, w.text(0, upToCompaction));
    const out = await s.run('user-prompt-submit', {
      prompt: 'Why does the billing_invoices migration fail?',
    });
    expect(out.output).toBeNull();
    expect(out.ingest.folded).toBeGreaterThan(0);
  });

  it('skips records that are still live instead of paging in an older one (intent ownership)', async () => {
    const s = setup();
    const w = session();
    w.assistant('', [
      {
        name: 'Bash',
        input: { command: 'mix ecto.migrate' },
        result: 'MigrationError again: billing_invoices exists',
        isError: true,
      },
    ]);
    w.user('ok');
    writeFileSync(s.transcript, w.text());
    const out = await s.run('user-prompt-submit', { prompt: 'billing_invoices MigrationError' });
    expect(out.context?.live.length).toBeGreaterThan(0);
    expect(out.output).toBeNull();
  });

  it('a long archived turn is paged with its last lines, where a run ends with its outcome', async () => {
    const s = setup();
    const w = new TranscriptWriter(SESSION);
    w.user('Build the renderer bundle');
    const log = Array.from({ length: 3000 }, (_, i) => `compiling module_${i}.ex`).join('\n');
    w.assistant('Running the renderer build script.', [
      {
        name: 'Bash',
        input: { command: './scripts/build-renderer.sh' },
        result: `${log}\nbundle digest 7f3e2a1`,
      },
    ]);
    w.compact('Summary: the renderer bundle was built.');
    w.user('Continue with the dashboard');
    w.assistant('Working on the dashboard.');
    writeFileSync(s.transcript, w.text());
    const out = await s.run('user-prompt-submit', {
      prompt: 'What did the renderer build script print when it finished?',
    });
    const ctx = out.output!.hookSpecificOutput!.additionalContext;
    expect(ctx).toContain('./scripts/build-renderer.sh');
    expect(ctx).toContain('[…]\n');
    expect(ctx).toContain('compiling module_2999.ex\nbundle digest 7f3e2a1\n');
    expect(ctx).not.toContain('compiling module_1500.ex');
    expect(Buffer.byteLength(ctx)).toBeLessThanOrEqual(MAX_CONTEXT_BYTES);
  });

  it('ranked (default): a live turn that only shares frequent words does not keep the intent', async () => {
    const s = setup();
    const w = new TranscriptWriter(SESSION);
    w.user('Run the widget tests');
    w.assistant('', [
      {
        name: 'Bash',
        input: { command: 'mix test test/widget_test.exs' },
        result: 'Running ExUnit with seed: 4242\n17 tests, 0 failures',
      },
    ]);
    w.compact('Summary: widget tests were run.');
    w.user('Review the widget tests and the renderer tests later');
    w.assistant('I will review the widget tests and the renderer tests after the dashboard.');
    w.user('ok');
    writeFileSync(s.transcript, w.text());
    const prompt = 'How many widget tests passed when they ran?';
    const out = await s.run('user-prompt-submit', { prompt });
    expect(out.context!.pages[0]!.step_id).toBe(1);
    expect(out.output!.hookSpecificOutput!.additionalContext).toContain('17 tests, 0 failures');
    // --retrieval reference keeps the reference RGSC and its ownership rule.
    const ref = await runHook({
      event: 'user-prompt-submit',
      baseDir: s.baseDir,
      input: { session_id: SESSION, transcript_path: s.transcript, cwd: s.root, prompt },
      engine: { retrieval: 'reference' },
    });
    // The reference scan selects the live narration too (it shares "widget" and "tests").
    expect(ref.context!.live.length).toBeGreaterThan(0);
  });

  it('bounds the injected text to 8 KB, cutting a long record at a line boundary', async () => {
    const s = setup();
    const w = new TranscriptWriter(SESSION);
    const log = Array.from({ length: 3000 }, (_, i) => `frobnicator line ${i}: ok`).join('\n');
    w.user('run the frobnicator');
    w.assistant('', [{ name: 'Bash', input: { command: './frobnicate' }, result: log }]);
    w.compact('frobnicator ran');
    writeFileSync(s.transcript, w.text());
    const out = await s.run('user-prompt-submit', { prompt: 'what did the frobnicator print?' });
    const ctx = out.output!.hookSpecificOutput!.additionalContext;
    expect(Buffer.byteLength(ctx)).toBeLessThanOrEqual(MAX_CONTEXT_BYTES);
    expect(Buffer.byteLength(ctx)).toBeGreaterThan(MAX_CONTEXT_BYTES * 0.6);
    expect(ctx).toMatch(/chunk="1\/\d+" truncated="true"/);
    expect(ctx).toMatch(/\n<\/archived_record[^>\n]*>$/);
    expect(out.context!.pages[0]).toMatchObject({ chunk: 0, truncated: true });
  });

  it('a prompt past the scan bound: its first and last lines are scanned, and the user is told', async () => {
    const s = setup();
    writeFileSync(s.transcript, session().text());
    // A question, then a pasted log of 2.4 M characters.
    const prompt = `Why does the billing_invoices migration fail?\n${'INFO worker ok\n'.repeat(160_000)}`;
    expect(prompt.length).toBeGreaterThan(MAX_SCANNED_PROMPT_CHARS);
    const out = await s.run('user-prompt-submit', { prompt });
    expect(out.output!.hookSpecificOutput!.additionalContext).toContain('billing_invoices exists');
    expect(out.output!.systemMessage).toMatch(
      /^contextfold: this prompt has 2,400,046 characters; the archive was searched for its first and last lines only \(2,097,1\d\d characters\), to answer within the hook's time limit$/,
    );
  });

  it('never pages in a tampered record; it tells the model and the user the record was refused', async () => {
    const s = setup();
    writeFileSync(s.transcript, session().text());
    const prompt = 'Why does the billing_invoices migration fail?';
    const first = await s.run('user-prompt-submit', { prompt });
    const step = first.context!.pages[0]!.step_id;
    const file = join(s.store, 'cold_nodes', `step_${String(step).padStart(6, '0')}.json`);
    const node = JSON.parse(readFileSync(file, 'utf8'));
    node.raw_content += ' TAMPERED';
    writeFileSync(file, JSON.stringify(node, null, 2));
    const out = await s.run('user-prompt-submit', { prompt });
    const ctx = out.output!.hookSpecificOutput!.additionalContext;
    expect(ctx).not.toContain('TAMPERED');
    expect(ctx).toContain(
      `archived step ${step} was selected but not paged in: IntegrityCheckError`,
    );
    // Claude Code shows systemMessage to the user, with the path of the refused record.
    expect(out.output!.systemMessage).toMatch(
      new RegExp(
        `^contextfold: archived step ${step} was selected for this prompt but not paged in: IntegrityCheckError: .*step_${String(step).padStart(6, '0')}`,
      ),
    );
    expect(out.output!.systemMessage!.split('\n')).toHaveLength(1);
  });
});

describe('incremental ingestion', () => {
  it('folds the same turns, with the same hashes, as importing the finished transcript', async () => {
    const s = setup();
    const w = session();
    for (let i = 1; i <= w.rows.length; i += 3) {
      writeFileSync(s.transcript, w.text(0, i));
      await s.run('user-prompt-submit', { prompt: 'anything' });
    }
    await s.run('pre-compact', { trigger: 'manual' });
    const got = await s.entries();
    const turns = parseClaudeCodeTranscript(w.text(), 't').turns;
    expect(got.map((e) => e.step_id)).toEqual(turns.map((t) => t.step_id));
    const ref = await ContextFold.open({ dir: join(s.root, 'ref') });
    const folded = await ref.foldMany(
      turns.map((t) => ({ stepId: t.step_id, summary: summarizeTurn(t), content: t.content })),
    );
    await ref.close();
    expect(got.map((e) => e.projection_sha256)).toEqual(folded.map((f) => f.projection_sha256));
  });

  it('reads only what was appended since the last run', async () => {
    const s = setup();
    const w = session();
    writeFileSync(s.transcript, w.text());
    await s.run('user-prompt-submit', { prompt: 'x' });
    // Damage a line that was already read: a run that re-read the file would fail on it.
    const text = readFileSync(s.transcript, 'utf8');
    const firstLine = text.indexOf('\n');
    writeFileSync(s.transcript, `${'#'.repeat(firstLine)}${text.slice(firstLine)}`);
    w.user('one more prompt');
    appendFileSync(s.transcript, w.text(w.rows.length - 1));
    const out = await s.run('user-prompt-submit', { prompt: 'x' });
    expect(out.ingest.turns).toBe(parseClaudeCodeTranscript(w.text(), 't').turns.length);
    const again = await s.run('user-prompt-submit', { prompt: 'x' });
    expect(again.ingest.folded).toBe(0);
  });

  it('a run with nothing new redacts nothing and leaves the state file as it was', async () => {
    const s = setup();
    // The last turn stays open (its answer may still grow), so the state file holds its text.
    writeFileSync(s.transcript, session().user('one more question').text());
    await s.run('user-prompt-submit', { prompt: 'x' });
    const statePath = sessionPaths(s.baseDir, SESSION).statePath;
    const before = { text: readFileSync(statePath, 'utf8'), mtime: statSync(statePath).mtimeMs };
    expect(JSON.parse(before.text).reader.builder.open.length).toBeGreaterThan(0);
    const cf = await ContextFold.open({ dir: s.store });
    let redactions = 0;
    const counting = new Proxy(cf, {
      get(target, key) {
        if (key === 'redactTexts') {
          return (texts: string[]) => {
            redactions++;
            return target.redactTexts(texts);
          };
        }
        const v = Reflect.get(target, key, target);
        return typeof v === 'function' ? v.bind(target) : v;
      },
    });
    try {
      const r = await ingestTranscript(counting, {
        transcriptPath: s.transcript,
        statePath,
        mode: 'prompt',
      });
      expect(r.folded).toBe(0);
    } finally {
      await cf.close({ compact: false });
    }
    expect(redactions).toBe(0);
    expect(readFileSync(statePath, 'utf8')).toBe(before.text);
    expect(statSync(statePath).mtimeMs).toBe(before.mtime);
  });

  it('leaves a line that is still being written for the next run', async () => {
    const s = setup();
    const w = session().user('one last question about the dashboard');
    const all = w.text();
    const cut = all.length - 40;
    writeFileSync(s.transcript, all.slice(0, cut));
    const partial = await s.run('user-prompt-submit', { prompt: 'x' });
    appendFileSync(s.transcript, all.slice(cut));
    const done = await s.run('pre-compact');
    expect(done.ingest.turns).toBe(parseClaudeCodeTranscript(all, 't').turns.length);
    expect(partial.ingest.turns).toBeLessThan(done.ingest.turns);
  });

  it('reads a repeated row (same uuid) once, also across runs', async () => {
    const s = setup();
    const w = session();
    writeFileSync(s.transcript, w.text());
    const first = await s.run('pre-compact');
    appendFileSync(s.transcript, `${w.rows[0]}\n${w.rows[1]}\n`);
    const second = await s.run('pre-compact');
    expect(second.ingest.turns).toBe(first.ingest.turns);
  });

  it('catches up on a long backlog over several runs with a per-run limit', async () => {
    const s = setup();
    const w = session();
    writeFileSync(s.transcript, w.text());
    const runs: number[] = [];
    for (let i = 0; i < 10; i++) {
      const r = await s.run('user-prompt-submit', { prompt: 'x' }, 2);
      runs.push(r.ingest.folded);
      if (!r.ingest.more) break;
    }
    expect(runs.length).toBeGreaterThan(2);
    expect(Math.max(...runs)).toBeLessThanOrEqual(3);
    await s.run('pre-compact');
    expect((await s.entries()).length).toBe(parseClaudeCodeTranscript(w.text(), 't').turns.length);
  });

  it('reads a long backlog a bounded number of bytes at a time, over several runs', async () => {
    const s = setup();
    const w = session();
    writeFileSync(s.transcript, w.text());
    const { statePath } = sessionPaths(s.baseDir, SESSION);
    const cf = await ContextFold.open({ dir: s.store, tokenizer: 'reference' });
    try {
      const runs: { folded: number; more: boolean }[] = [];
      for (let i = 0; i < 20; i++) {
        const r = await ingestTranscript(cf, {
          transcriptPath: s.transcript,
          statePath,
          mode: 'compact',
          maxReadBytes: 1500,
        });
        runs.push({ folded: r.folded, more: r.more });
        if (!r.more) break;
      }
      expect(runs.length).toBeGreaterThan(2);
      expect(runs.at(-1)!.more).toBe(false);
    } finally {
      await cf.close({ compact: false });
    }
    const direct = setup();
    writeFileSync(direct.transcript, w.text());
    await direct.run('pre-compact');
    expect(await s.timeless()).toEqual(await direct.timeless());
  });

  it('re-reads a rewritten (shorter) transcript without refolding or renumbering', async () => {
    const s = setup();
    const w = session();
    writeFileSync(s.transcript, w.text());
    await s.run('pre-compact');
    const before = await s.entries();
    writeFileSync(s.transcript, w.text(0, 3));
    const r = await s.run('pre-compact');
    expect(r.ingest.folded).toBe(0);
    expect(await s.entries()).toEqual(before);
  });

  it('re-reads a transcript rewritten longer (the last offset now mid-line), without renumbering', async () => {
    const s = setup();
    const w = session();
    writeFileSync(s.transcript, w.text(0, 6));
    await s.run('user-prompt-submit', { prompt: 'x' });
    // The same rows behind a new first line: where the last run stopped is inside a line now.
    const first = '{"type":"file-history-snapshot","messageId":"m0","snapshot":{}}\n';
    writeFileSync(s.transcript, first + w.text());
    await s.run('pre-compact');
    const direct = setup();
    writeFileSync(direct.transcript, w.text());
    await direct.run('pre-compact');
    expect(await s.timeless()).toEqual(await direct.timeless());
  });

  /** `n` meta rows (each a uuid the reader keeps, none a turn) before the session's rows. */
  const longSession = (n: number) => {
    const meta = Array.from({ length: n }, (_, i) =>
      JSON.stringify({
        type: 'user',
        isMeta: true,
        uuid: `10000000-0000-4000-8000-${String(i).padStart(12, '0')}`,
        sessionId: SESSION,
        message: { role: 'user', content: 'caveat' },
      }),
    );
    const w = session();
    return { w, text: (to = w.rows.length) => `${meta.join('\n')}\n${w.text(0, to)}` };
  };
  const lines = (path: string) => readFileSync(path, 'utf8').split('\n').length - 1;
  /** Conversation rows (the ones whose uuid the reader keeps) of a transcript text. */
  const conversationRows = (text: string) =>
    text.split('\n').filter((l) => l !== '' && ['user', 'assistant'].includes(JSON.parse(l).type))
      .length;

  it('keeps the state file bounded: every uuid read is appended to the log beside it', async () => {
    const s = setup();
    const long = longSession(3000);
    writeFileSync(s.transcript, long.text(5));
    const { statePath } = sessionPaths(s.baseDir, SESSION);
    await s.run('user-prompt-submit', { prompt: 'x' });
    const state = JSON.parse(readFileSync(statePath, 'utf8'));
    expect(state.version).toBe(2);
    expect(state.reader.seen_uuids).toHaveLength(RECENT_UUIDS);
    expect(statSync(statePath).size).toBeLessThan(64 * 1024);
    const log = uuidLogPath(statePath);
    expect(lines(log)).toBe(conversationRows(long.text(5)));
    appendFileSync(s.transcript, `${long.w.rows.slice(5).join('\n')}\n`);
    await s.run('pre-compact');
    expect(lines(log)).toBe(conversationRows(long.text()));
    expect(statSync(log).size).toBe(JSON.parse(readFileSync(statePath, 'utf8')).uuids_bytes);
    expect((await s.entries()).length).toBe(
      parseClaudeCodeTranscript(long.w.text(), 't').turns.length,
    );
  });

  it('a transcript rewritten after more rows than the state file keeps: re-read with the log, nothing refolded or renumbered', async () => {
    const s = setup();
    const long = longSession(2000);
    writeFileSync(s.transcript, long.text());
    await s.run('pre-compact');
    const before = await s.entries();
    // Shorter (the first rows only), then longer behind a new first line: every row was read.
    writeFileSync(s.transcript, long.text(3));
    expect((await s.run('pre-compact')).ingest.folded).toBe(0);
    const first = '{"type":"file-history-snapshot","messageId":"m0","snapshot":{}}\n';
    writeFileSync(s.transcript, first + long.text());
    expect((await s.run('pre-compact')).ingest.folded).toBe(0);
    expect(await s.entries()).toEqual(before);
    // The same length and line ends, other bytes just before the offset (the last row written
    // again with a new uuid): read again from the start too, the new row once, as a new turn.
    const last = long.w.rows.at(-1)!;
    const uuid = JSON.parse(last).uuid as string;
    const renamed = last.replace(uuid, `f${uuid.slice(1)}`);
    writeFileSync(s.transcript, first + long.text().replace(last, renamed));
    const again = await s.run('pre-compact');
    expect(again.ingest.folded).toBe(1);
    expect(again.ingest.turns).toBe(before.length + 1);
    expect((await s.run('pre-compact')).ingest.folded).toBe(0);
  });

  it('reads a version 1 state file (every uuid in it), moving its uuids to the log', async () => {
    const s = setup();
    const long = longSession(1500);
    writeFileSync(s.transcript, long.text(5));
    await s.run('user-prompt-submit', { prompt: 'x' });
    const { statePath } = sessionPaths(s.baseDir, SESSION);
    const log = uuidLogPath(statePath);
    const all = readFileSync(log, 'utf8')
      .trim()
      .split('\n')
      .map((l) => JSON.parse(l));
    const v2 = JSON.parse(readFileSync(statePath, 'utf8'));
    const { tail_sha256, uuids_bytes, ...rest } = v2;
    const v1 = { ...rest, version: 1, reader: { ...v2.reader, seen_uuids: all } };
    writeFileSync(statePath, JSON.stringify(v1));
    rmSync(log);
    // The first meta row again (far before the last RECENT_UUIDS), then the rest of the session.
    const repeat = readFileSync(s.transcript, 'utf8').split('\n')[0];
    appendFileSync(s.transcript, `${repeat}\n${long.w.rows.slice(5).join('\n')}\n`);
    await s.run('pre-compact');
    expect(JSON.parse(readFileSync(statePath, 'utf8')).version).toBe(2);
    expect(lines(log)).toBe(conversationRows(long.text()));
    expect((await s.entries()).length).toBe(
      parseClaudeCodeTranscript(long.w.text(), 't').turns.length,
    );
  });

  /**
   * 400 exchanges (more rows than the recent uuids), a compaction, then the first 40 rows
   * appended again with two new rows: the repeats are read once. `rows` gives the rows written
   * from `from` on, as the transcript holds them (their timestamps).
   */
  async function repeatedRowsReadOnce(rows: (w: TranscriptWriter, from: number) => string[]) {
    const s = setup();
    const w = new TranscriptWriter(SESSION);
    for (let i = 0; i < 400; i++) {
      w.user(`Check service_${i}`);
      w.assistant(`Checking service_${i}.`, [
        { name: 'Bash', input: { command: `systemctl status service_${i}` }, result: `ok ${i}` },
      ]);
    }
    const history = rows(w, 0);
    expect(conversationRows(history.join('\n'))).toBeGreaterThan(RECENT_UUIDS);
    writeFileSync(s.transcript, `${history.join('\n')}\n`);
    const first = await s.run('pre-compact', {}, 10_000);
    // A later compaction re-appends the first rows (same uuids and timestamps), then new work.
    const n = w.rows.length;
    w.user('Check the load balancer');
    w.assistant('The load balancer is up.');
    appendFileSync(s.transcript, `${[...history.slice(0, 40), ...rows(w, n)].join('\n')}\n`);
    const second = await s.run('pre-compact', {}, 10_000);
    expect(second.ingest.folded).toBe(2);
    expect(second.ingest.turns).toBe(first.ingest.turns + 2);
    const all = readFileSync(s.transcript, 'utf8');
    expect((await s.entries()).length).toBe(parseClaudeCodeTranscript(all, 't').turns.length);
    return history;
  }

  it('reads once a row repeating a uuid older than the recent ones (history Claude Code appends again)', async () => {
    // Real transcripts: each row is stamped when it is written; a replayed copy keeps its own.
    await repeatedRowsReadOnce((w, from) =>
      w.rows
        .slice(from)
        .map((r, i) =>
          r.replace(
            '2026-03-01T10:00:00.000Z',
            new Date(Date.UTC(2026, 2, 1, 10) + (from + i) * 1000).toISOString(),
          ),
        ),
    );
  });

  it('reads once a repeated row with no timestamp whose uuid is older than the recent ones', async () => {
    // Rows that cannot be placed in time: no timestamp at all.
    const history = await repeatedRowsReadOnce((w, from) =>
      w.rows.slice(from).map((r) => r.replace('"timestamp":"2026-03-01T10:00:00.000Z",', '')),
    );
    expect(history[0]).not.toContain('timestamp');
  });

  it('refuses a missing or cut uuid log when the transcript must be read again, and says so', async () => {
    const s = setup();
    const long = longSession(10);
    writeFileSync(s.transcript, long.text());
    await s.run('pre-compact');
    const { statePath } = sessionPaths(s.baseDir, SESSION);
    const log = uuidLogPath(statePath);
    const kept = readFileSync(log);
    const state = readFileSync(statePath, 'utf8');
    writeFileSync(s.transcript, long.text(3));
    writeFileSync(log, kept.subarray(0, kept.length - 5));
    const cut = await s.run('pre-compact');
    expect(cut.ingest.folded).toBe(0);
    expect(cut.output?.systemMessage).toMatch(
      /^contextfold: IntegrityCheckError \(INTEGRITY_CHECK\): hook uuid log is shorter than the \d+ bytes the state file covers: .*\.state\.uuids; move it .*; this run folded nothing/,
    );
    rmSync(log);
    const gone = await s.run('pre-compact');
    expect(gone.output?.systemMessage).toMatch(
      /^contextfold: IntegrityCheckError \(INTEGRITY_CHECK\): hook uuid log is missing: /,
    );
    expect(readFileSync(statePath, 'utf8')).toBe(state);
  });

  it('a refused uuid log is the hook state, not the store: what is archived is still paged in', async () => {
    const s = setup();
    const w = session();
    writeFileSync(s.transcript, w.text());
    await s.run('user-prompt-submit', { prompt: 'x' });
    rmSync(uuidLogPath(sessionPaths(s.baseDir, SESSION).statePath));
    writeFileSync(s.transcript, w.text(0, w.rows.length - 1)); // rewritten: read from the start
    const out = await s.run('user-prompt-submit', { prompt: 'Which migration failed?' });
    expect(out.output?.hookSpecificOutput?.additionalContext).toContain('billing_invoices');
    expect(out.output?.systemMessage).toMatch(/hook uuid log is missing: .*\.state\.uuids/);
  });

  it('refuses a damaged state file instead of re-reading silently', async () => {
    const s = setup();
    writeFileSync(s.transcript, session().text());
    await s.run('user-prompt-submit', { prompt: 'x' });
    const { statePath } = sessionPaths(s.baseDir, SESSION);
    writeFileSync(statePath, '{"version": 1, "offs');
    await expect(s.run('user-prompt-submit', { prompt: 'x' })).rejects.toThrow(
      /hook state file is not valid JSON/,
    );
  });

  /** The session's rows with a torn row (Claude Code stopped mid-write) after the first `at`. */
  const tornAt = (w: TranscriptWriter, at: number) => {
    const torn = w.text(at, at + 1).slice(0, 40);
    return { torn, text: `${w.text(0, at)}${torn}\n${w.text(at)}` };
  };

  it('skips a torn row followed by complete rows, reports it once, and archives the rows after it', async () => {
    const s = setup();
    const w = session();
    const { text } = tornAt(w, 3);
    writeFileSync(s.transcript, text);
    const first = await s.run('user-prompt-submit', { prompt: 'x' });
    expect(first.ingest.skippedRows).toEqual([
      expect.objectContaining({ line: 4, offset: Buffer.byteLength(w.text(0, 3)) }),
    ]);
    expect(first.output?.systemMessage?.split('\n')).toEqual([
      `contextfold: skipped line 4 of ${s.transcript} (byte ${Buffer.byteLength(w.text(0, 3))}): not valid JSON (unexpected end of input, expected a closing quote at column 41); a Claude Code transcript has one JSON object per line; that row is not archived (Claude Code or the machine stopped while writing it, or this reader does not understand it); the rows after it are archived`,
    ]);
    w.user('one more prompt');
    appendFileSync(s.transcript, w.text(w.rows.length - 1));
    const next = await s.run('pre-compact');
    expect(next.ingest.skippedRows).toEqual([]);
    expect(next.output?.systemMessage).toBeUndefined();
    // The same steps as the transcript without the torn row.
    const direct = setup();
    writeFileSync(direct.transcript, w.text());
    await direct.run('pre-compact');
    expect(await s.timeless()).toEqual(await direct.timeless());
    const state = JSON.parse(readFileSync(sessionPaths(s.baseDir, SESSION).statePath, 'utf8'));
    expect(state.skipped_rows).toEqual([
      expect.objectContaining({ line: 4, reason: expect.stringMatching(/^not valid JSON/) }),
    ]);
  });

  it('a row that is valid JSON but not a transcript row is skipped and reported the same way', async () => {
    const s = setup();
    const w = session();
    writeFileSync(s.transcript, `${w.text(0, 2)}[1, 2]\n${w.text(2)}`);
    const out = await s.run('user-prompt-submit', { prompt: 'x' });
    expect(out.output?.systemMessage).toMatch(
      /^contextfold: skipped line 3 of .*: expected a JSON object \(a transcript row\); that row is not archived/,
    );
    expect(out.ingest.turns).toBe(parseClaudeCodeTranscript(w.text(), 't').turns.length);
  });

  it('a torn row cut inside a character (not UTF-8) is skipped and reported the same way', async () => {
    const s = setup();
    const w = session();
    const row = Buffer.from(w.text(3, 4).replace('"', '"é'));
    const torn = row.subarray(0, row.indexOf(Buffer.from('é')) + 1); // half of é
    const before = Buffer.from(w.text(0, 3));
    writeFileSync(s.transcript, Buffer.concat([before, torn, Buffer.from(`\n${w.text(3)}`)]));
    const out = await s.run('user-prompt-submit', { prompt: 'x' });
    expect(out.output?.systemMessage).toBe(
      `contextfold: skipped line 4 of ${s.transcript} (byte ${before.length}): not valid UTF-8; that row is not archived (Claude Code or the machine stopped while writing it, or this reader does not understand it); the rows after it are archived`,
    );
    expect(out.ingest.turns).toBe(parseClaudeCodeTranscript(w.text(), 't').turns.length);
  });

  it('many torn rows in one run: three are named, then how many more', async () => {
    const s = setup();
    const w = session();
    const broken = Array.from({ length: 5 }, (_, i) => `{"type":"user","n":${i}`).join('\n');
    writeFileSync(s.transcript, `${w.text(0, 2)}${broken}\n${w.text(2)}`);
    const out = await s.run('user-prompt-submit', { prompt: 'x' });
    expect(out.ingest.skippedRows.map((r) => r.line)).toEqual([3, 4, 5, 6, 7]);
    const lines = out.output!.systemMessage!.split('\n');
    expect(lines).toHaveLength(4);
    expect(lines[3]).toBe(
      `contextfold: skipped 2 more lines of ${s.transcript} (their line numbers and byte offsets are in the hook state file)`,
    );
  });

  it('a byte order mark before the first row is not a torn row', async () => {
    const s = setup();
    const w = session();
    writeFileSync(s.transcript, `\uFEFF${w.text()}`);
    const out = await s.run('user-prompt-submit', { prompt: 'x' });
    expect(out.ingest.skippedRows).toEqual([]);
    expect(out.ingest.turns).toBe(parseClaudeCodeTranscript(w.text(), 't').turns.length);
  });

  it('leaves a torn last line without its line feed for the next run: nothing skipped or reported', async () => {
    const s = setup();
    const w = session();
    const { torn } = tornAt(w, w.rows.length - 1);
    writeFileSync(s.transcript, `${w.text(0, w.rows.length - 1)}${torn}`);
    const out = await s.run('user-prompt-submit', { prompt: 'x' });
    expect(out.ingest.skippedRows).toEqual([]);
    expect(out.output?.systemMessage).toBeUndefined();
    const state = JSON.parse(readFileSync(sessionPaths(s.baseDir, SESSION).statePath, 'utf8'));
    expect(state.offset).toBe(Buffer.byteLength(w.text(0, w.rows.length - 1)));
    expect(state.skipped_rows).toBeUndefined();
    // Claude Code finishes writing it: the row is read whole.
    writeFileSync(s.transcript, w.text());
    const done = await s.run('pre-compact');
    expect(done.ingest.skippedRows).toEqual([]);
    expect(done.ingest.turns).toBe(parseClaudeCodeTranscript(w.text(), 't').turns.length);
  });

  it('a re-read from the start meets the skipped row again: the same decision, not reported again', async () => {
    const s = setup();
    const w = session();
    const { text } = tornAt(w, 3);
    writeFileSync(s.transcript, text);
    await s.run('user-prompt-submit', { prompt: 'x' });
    const before = await s.entries();
    // Rewritten (shorter): read from the start, the torn row included.
    writeFileSync(s.transcript, text.slice(0, text.lastIndexOf('\n', text.length - 2) + 1));
    const again = await s.run('user-prompt-submit', { prompt: 'x' });
    expect(again.ingest.skippedRows).toEqual([]);
    expect(again.output?.systemMessage).toBeUndefined();
    expect(await s.entries()).toEqual(before);
    // Grown again: the same store as a run that read it all at once.
    writeFileSync(s.transcript, text);
    await s.run('pre-compact');
    const direct = setup();
    writeFileSync(direct.transcript, text);
    const once = await direct.run('pre-compact');
    expect(once.ingest.skippedRows).toHaveLength(1);
    expect(await s.timeless()).toEqual(await direct.timeless());
  });

  it('refuses a state file whose skipped rows were tampered with', async () => {
    const s = setup();
    writeFileSync(s.transcript, tornAt(session(), 3).text);
    await s.run('user-prompt-submit', { prompt: 'x' });
    const { statePath } = sessionPaths(s.baseDir, SESSION);
    const state = JSON.parse(readFileSync(statePath, 'utf8'));
    state.skipped_rows[0].sha256 = 'nope';
    writeFileSync(statePath, JSON.stringify(state));
    await expect(s.run('user-prompt-submit', { prompt: 'x' })).rejects.toThrow(
      /hook state file has an unknown layout/,
    );
  });

  it('a transcript_path that is a directory: the user is told, nothing is paged in, and no store is made', async () => {
    const s = setup();
    mkdirSync(s.transcript);
    const out = await s.run('user-prompt-submit', { prompt: 'x' });
    expect(out.output).toEqual({
      systemMessage: `contextfold: UsageError (USAGE): ${s.transcript}: the transcript_path is a directory, not a transcript file; this run folded nothing (the next run tries again) and answered from what was already archived`,
    });
    expect(existsSync(s.store)).toBe(false);
  });

  it('a PreCompact run that folded nothing says the compaction goes ahead, not that it answered', async () => {
    // Before, it said "answered from what was already archived": PreCompact answers nothing.
    const s = setup();
    mkdirSync(s.transcript);
    const out = await s.run('pre-compact');
    expect(out.output?.systemMessage?.split('\n')[0]).toBe(
      `contextfold: UsageError (USAGE): ${s.transcript}: the transcript_path is a directory, not a transcript file; this run folded nothing (the next run tries again); the compaction goes ahead without it`,
    );
  });

  it('a missing transcript is an empty session', async () => {
    const s = setup();
    const out = await s.run('user-prompt-submit', { prompt: 'hello' });
    expect(out.output).toBeNull();
    expect(out.ingest.turns).toBe(0);
  });
});

describe('runHook pre-compact and session-start', () => {
  it('pre-compact also folds the last turn once its tool calls are answered', async () => {
    const s = setup();
    const w = session();
    writeFileSync(s.transcript, w.text());
    const turns = parseClaudeCodeTranscript(w.text(), 't').turns;
    await s.run('user-prompt-submit', { prompt: 'x' });
    expect((await s.entries()).length).toBe(turns.length - 1);
    await s.run('pre-compact', { trigger: 'auto' });
    expect((await s.entries()).length).toBe(turns.length);
    // Compacted on close: the store is in the reference layout.
    expect(existsSync(join(s.store, 'recall_index.json'))).toBe(true);
  });

  it('session-start after a compaction tells the model what is archived', async () => {
    const s = setup();
    writeFileSync(s.transcript, session().text());
    const out = await s.run('session-start', { source: 'compact' });
    expect(out.output?.hookSpecificOutput).toEqual({
      hookEventName: 'SessionStart',
      additionalContext: expect.stringMatching(
        /^contextfold: turns 0–5 of this session are archived verbatim/,
      ),
    });
    const fresh = setup();
    writeFileSync(fresh.transcript, new TranscriptWriter(SESSION).user('hi').text());
    expect((await fresh.run('session-start', { source: 'startup' })).output).toBeNull();
  });

  it('works on the real Claude Code fixture: archived steps come from before its compaction', async () => {
    const s = setup();
    copyFileSync(fixture, s.transcript);
    const out = await s.run('user-prompt-submit', {
      prompt: 'What was the Postgrex password authentication error?',
      session_id: SESSION,
    });
    expect(out.archived_before).toBe(3);
    const pages = out.context!.pages.map((p) => p.step_id);
    expect(pages[0]).toBe(1);
    expect(pages.every((s) => s < 3)).toBe(true);
    expect(statSync(sessionPaths(s.baseDir, SESSION).statePath).size).toBeLessThan(4096);
  });
});

describe('HookEngines (a long-lived process keeps session stores open)', () => {
  it('gives the same answers as opening the store on every run, and compacts on pre-compact', async () => {
    const a = setup();
    const b = setup();
    const engines = new HookEngines();
    try {
      const w = session();
      writeFileSync(a.transcript, w.text());
      writeFileSync(b.transcript, w.text());
      const prompt = 'Which MigrationError did mix ecto.migrate print?';
      const input = (s: ReturnType<typeof setup>) => ({
        session_id: SESSION,
        transcript_path: s.transcript,
        cwd: s.root,
        prompt,
      });
      for (let round = 0; round < 2; round++) {
        const kept = await runHook({
          event: 'user-prompt-submit',
          baseDir: a.baseDir,
          input: input(a),
          engines,
        });
        const fresh = await runHook({
          event: 'user-prompt-submit',
          baseDir: b.baseDir,
          input: input(b),
        });
        expect(kept.output).toEqual(fresh.output);
        expect(kept.output?.hookSpecificOutput?.additionalContext).toContain('billing_invoices');
        // More of the session arrives between prompts: both fold it.
        w.user(`round ${round}: check the dashboard`);
        writeFileSync(a.transcript, w.text());
        writeFileSync(b.transcript, w.text());
      }
      expect(await a.timeless()).toEqual(await b.timeless());
      expect(existsSync(join(a.store, 'recall_index.journal'))).toBe(true);
      await runHook({ event: 'pre-compact', baseDir: a.baseDir, input: input(a), engines });
      // The kept engine compacted: the store is in the reference layout, no journal left.
      expect(existsSync(join(a.store, 'recall_index.journal'))).toBe(false);
    } finally {
      await engines.closeAll();
    }
  });

  it('keeps at most four stores open, closing the least recently used', async () => {
    const engines = new HookEngines();
    const root = tempDir().dir;
    const opened = [];
    for (let i = 0; i < 5; i++) opened.push(await engines.get({ dir: join(root, `s${i}`) }));
    await new Promise((r) => setTimeout(r, 50));
    await expect(opened[0]!.status()).rejects.toMatchObject({ code: 'USAGE' });
    expect((await opened[4]!.status()).nodes).toBe(0);
    // Asked again, the first store is opened anew.
    expect(await engines.get({ dir: join(root, 's0') })).not.toBe(opened[0]);
    expect(await engines.get({ dir: join(root, 's4') })).toBe(opened[4]);
    await engines.closeAll();
    await expect(opened[4]!.status()).rejects.toMatchObject({ code: 'USAGE' });
  });
});
