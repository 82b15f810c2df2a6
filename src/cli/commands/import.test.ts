import { spawn } from 'node:child_process';
import { existsSync, mkdirSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { gzipSync } from 'node:zlib';
import { describe, expect, it } from 'vitest';
import { ContextFold } from '../../engine/context-fold.js';
import { isTempFileName } from '../../fs/durable-fs.js';
import { CLI, runCliInProcess, runCliProcess } from '../../test-utils/cli.js';
import { tempDir } from '../../test-utils/temp-dir.js';

const fixture = (name: string) =>
  new URL(`../../import/fixtures/${name}`, import.meta.url).pathname;

describe('contextfold import', () => {
  it('imports a gzipped Claude Code transcript under its own session id (--json)', async () => {
    const root = tempDir().dir;
    const gz = join(root, 'session.jsonl.gz');
    writeFileSync(gz, gzipSync(readFileSync(fixture('claude-code-session.jsonl'))));
    const dir = join(root, '.contextfold');
    const r = await runCliInProcess([
      '--dir',
      dir,
      'import',
      gz,
      '--format',
      'claude-code',
      '--json',
    ]);
    expect(r.stderr).toBe('');
    expect(r.code).toBe(0);
    expect(JSON.parse(r.stdout)).toEqual({
      file: gz,
      format: 'claude-code',
      format_detected: false,
      dir,
      session_id: '5e551011-aaaa-4bbb-8ccc-000000000001',
      turns: 6,
      folded: 6,
      already_folded: 0,
      first_step: 0,
      last_step: 5,
      open_steps: [],
      lone_surrogate_steps: [],
      skipped_records: {},
    });
    const node = JSON.parse(readFileSync(join(dir, 'cold_nodes', 'step_000001.json'), 'utf8'));
    expect(node.session_id).toBe('5e551011-aaaa-4bbb-8ccc-000000000001');
    const again = await runCliInProcess(['--dir', dir, 'import', gz, '--format', 'claude-code']);
    expect(again.stdout).toMatch(
      /^imported 6 turn\(s\) from .*: 0 folded, 6 already folded; steps 0–5;/,
    );
  });

  it('leaves out a last turn still open, and adds it whole when the grown transcript is imported again', async () => {
    // A running session: the last row is a tool call whose result is not written yet (the
    // import itself, run from Claude Code's Bash tool, is such a call). Importing it used to
    // store the call alone, and the grown transcript then failed with a step conflict.
    const root = tempDir().dir;
    const dir = join(root, '.contextfold');
    const file = join(root, 'live.jsonl');
    const row = (o: object) => JSON.stringify({ sessionId: 's-live', cwd: '/w', ...o });
    const rows = [
      row({ type: 'user', uuid: 'u1', message: { role: 'user', content: 'list files' } }),
      row({
        type: 'assistant',
        uuid: 'u2',
        message: {
          id: 'm1',
          role: 'assistant',
          content: [{ type: 'tool_use', id: 't1', name: 'Bash', input: { command: 'ls' } }],
        },
      }),
    ];
    writeFileSync(file, `${rows.join('\n')}\n`);
    const first = await runCliInProcess(['--dir', dir, 'import', file, '--json']);
    expect(first.code).toBe(0);
    expect(JSON.parse(first.stdout)).toMatchObject({ turns: 1, folded: 1, open_steps: [1] });
    const human = await runCliInProcess(['--dir', dir, 'import', file]);
    expect(human.stdout).toContain(
      'not imported: step 1, still open (a tool call without its result)',
    );
    rows.push(
      row({
        type: 'user',
        uuid: 'u3',
        message: {
          role: 'user',
          content: [{ type: 'tool_result', tool_use_id: 't1', content: 'a.txt' }],
        },
      }),
      row({
        type: 'assistant',
        uuid: 'u4',
        message: { id: 'm2', role: 'assistant', content: [{ type: 'text', text: 'One file.' }] },
      }),
    );
    writeFileSync(file, `${rows.join('\n')}\n`);
    const grown = await runCliInProcess(['--dir', dir, 'import', file, '--json']);
    expect(grown.stderr).toBe('');
    expect(JSON.parse(grown.stdout)).toMatchObject({
      turns: 3,
      folded: 2,
      already_folded: 1,
      open_steps: [],
    });
    const cf = await ContextFold.open({ dir });
    expect((await cf.hydrate(1)).content).toContain('a.txt');
    await cf.close();
  });

  it('imports a transcript with half an emoji (a lone surrogate) and says which step holds U+FFFD', async () => {
    // Claude Code wrote such rows when it cut a tool output mid-emoji; the whole import failed.
    const root = tempDir().dir;
    const dir = join(root, '.contextfold');
    const file = join(root, 'cut.jsonl');
    const row = (o: object) => JSON.stringify({ sessionId: 's-cut', cwd: '/w', ...o });
    writeFileSync(
      file,
      `${[
        row({ type: 'user', uuid: 'u1', message: { role: 'user', content: 'show the log' } }),
        row({
          type: 'assistant',
          uuid: 'u2',
          message: {
            id: 'm1',
            role: 'assistant',
            content: [{ type: 'text', text: 'The log ends with \uD83D' }],
          },
        }),
      ].join('\n')}\n`,
    );
    const r = await runCliInProcess(['--dir', dir, 'import', file, '--json']);
    expect(r.stderr).toBe('');
    expect(JSON.parse(r.stdout)).toMatchObject({ folded: 2, lone_surrogate_steps: [1] });
    const cf = await ContextFold.open({ dir });
    expect((await cf.hydrate(1)).content).toContain('The log ends with \uFFFD');
    await cf.close();
    const human = await runCliInProcess(['--dir', dir, 'import', file]);
    expect(human.stdout).toContain(
      'step 1: half an emoji (a lone surrogate, no UTF-8 form) stored as U+FFFD',
    );
  });

  it('a file of another format under --format is refused, not imported as nothing', async () => {
    // Before, a Claude Code transcript read as codex imported 0 turns and exited 0.
    const dir = join(tempDir().dir, '.contextfold');
    const r = await runCliInProcess([
      '--dir',
      dir,
      'import',
      fixture('claude-code-session.jsonl'),
      '--format',
      'codex',
    ]);
    expect(r.code).toBe(1);
    expect(r.stderr).toMatch(
      /has no codex messages: nothing to import \(another format\? try without --format\)$/m,
    );
    expect(existsSync(dir)).toBe(false);
  });

  it('a second conversation into the same store: the conflict says to use its own --dir', async () => {
    const dir = join(tempDir().dir, '.contextfold');
    await runCliInProcess(['--dir', dir, 'import', fixture('claude-code-session.jsonl')]);
    const other = await runCliInProcess([
      '--dir',
      dir,
      'import',
      fixture('openai-chat.json'),
      '--format',
      'openai',
    ]);
    expect(other.code).toBe(1);
    expect(other.stderr).toMatch(
      /StepConflictError: .*import each conversation into its own store \(--dir\)/,
    );
  });

  it.each([
    ['one line on stderr', false],
    ['the error object on stdout (--json)', true],
  ])(
    'stopped by Ctrl-C after its first round: %s says how many turns are in the store, and the same import adds the rest',
    async (_how, json) => {
      // Before, a long import stopped by a signal printed nothing: which turns it had stored
      // (rounds of 1,024 are committed one by one) was left to guess.
      const root = tempDir().dir;
      const dir = join(root, '.contextfold');
      const file = join(root, 'long.jsonl');
      const total = 2100;
      const rows = Array.from({ length: total }, (_, i) =>
        JSON.stringify({ step_id: i, role: i % 2 ? 'assistant' : 'user', content: `turn ${i}` }),
      );
      writeFileSync(file, `${rows.join('\n')}\n`);
      const args = [CLI, '--dir', dir, 'import', file, ...(json ? ['--json'] : [])];
      const child = spawn(process.execPath, args);
      let stdout = '';
      let stderr = '';
      child.stdout.on('data', (b: Buffer) => {
        stdout += b.toString('utf8');
      });
      child.stderr.on('data', (b: Buffer) => {
        stderr += b.toString('utf8');
      });
      const ended = new Promise<NodeJS.Signals | null>((done) =>
        child.on('close', (_code, signal) => done(signal)),
      );
      // The second round has begun (its node files are being written): the first is committed.
      const nodes = join(dir, 'cold_nodes');
      const secondRound = () =>
        existsSync(nodes) &&
        readdirSync(nodes).some((f) => Number(/step_(\d+)/.exec(f)?.[1] ?? -1) >= 1024);
      while (!secondRound()) await new Promise((r) => setTimeout(r, 10));
      child.kill('SIGINT');
      expect(await ended).toBe('SIGINT');
      // The round in progress had temp node files: the handler removed them (before, they stayed
      // and validate reported each as an integrity problem, even after the import was redone).
      expect(readdirSync(nodes).filter(isTempFileName)).toEqual([]);
      const line =
        /^import interrupted: (\d+) of 2100 turn\(s\) written \(steps 0–(\d+) are in the store\); the same import again adds the rest$/;
      let written: number;
      if (json) {
        expect(stderr).toBe('');
        const r = JSON.parse(stdout);
        expect(r).toMatchObject({ error: 'Interrupted', code: 'INTERRUPTED', signal: 'SIGINT' });
        expect(r.message).toMatch(line);
        written = r.written;
        expect(r).toMatchObject({ turns: total, first_step: 0, last_step: written - 1 });
      } else {
        expect(stdout).toBe('');
        const said = line.exec(stderr.replace(/^contextfold: /, '').trimEnd());
        expect(said, stderr).not.toBeNull();
        written = Number(said![1]);
        expect(Number(said![2])).toBe(written - 1);
      }
      expect(written).toBeGreaterThanOrEqual(1024);
      expect(written).toBeLessThan(total);
      const cf = await ContextFold.open({ dir });
      expect((await cf.status()).nodes).toBe(written);
      await cf.close();
      const again = await runCliInProcess(['--dir', dir, 'import', file]);
      expect(again.stdout).toMatch(
        new RegExp(`: ${total - written} folded, ${written} already folded; steps 0–${total - 1};`),
      );
      const validate = await runCliInProcess(['--dir', dir, 'validate', '--json']);
      expect(JSON.parse(validate.stdout)).toMatchObject({ ok: true, problems: [] });
    },
    120_000,
  );

  it('an error after some rounds were committed says how many turns are in the store', async () => {
    // Before, the error alone was printed: the rounds already committed stayed in the store
    // without a word.
    const root = tempDir().dir;
    const dir = join(root, '.contextfold');
    const file = join(root, 'long.jsonl');
    const rows = Array.from({ length: 2100 }, (_, i) =>
      JSON.stringify({ step_id: i, role: i % 2 ? 'assistant' : 'user', content: `turn ${i}` }),
    );
    writeFileSync(file, `${rows.join('\n')}\n`);
    const child = spawn(process.execPath, [CLI, '--dir', dir, 'import', file]);
    let stderr = '';
    child.stderr.on('data', (b: Buffer) => {
      stderr += b.toString('utf8');
    });
    const ended = new Promise<number | null>((done) => child.on('close', (code) => done(code)));
    // While the second round (steps 1024–2047) is written, a file appears where the third
    // round's last node goes: that round is refused, the first two stay.
    const nodes = join(dir, 'cold_nodes');
    const secondRound = () =>
      existsSync(nodes) &&
      readdirSync(nodes).some((f) => Number(/step_(\d+)/.exec(f)?.[1] ?? -1) >= 1024);
    while (!secondRound()) await new Promise((r) => setTimeout(r, 10));
    mkdirSync(join(nodes, 'step_002099.json'));
    expect(await ended).toBe(4);
    expect(stderr).toMatch(
      /^contextfold: OrphanedNodeError: step 2099 has a cold node file but no index entry .*\. The import stopped after 2048 of 2100 turn\(s\) \(steps 0–2047 are in the store\); once that is fixed, the same import adds the rest\n$/,
    );
    const cf = await ContextFold.open({ dir });
    expect((await cf.status()).nodes).toBe(2048);
    await cf.close();
  }, 120_000);

  it('--session overrides the session id', async () => {
    const dir = join(tempDir().dir, '.contextfold');
    const r = await runCliInProcess([
      '--dir',
      dir,
      '--session',
      'support-42',
      'import',
      fixture('openai-chat.json'),
      '--format',
      'openai',
      '--json',
    ]);
    expect(JSON.parse(r.stdout).session_id).toBe('support-42');
    const cf = await ContextFold.open({ dir });
    expect((await cf.hydrate(2)).content).toContain('[tool_result: run_shell id=call_psql]');
    await cf.close();
  });

  it('malformed input: one line naming file and line, exit 1, nothing written', async () => {
    const root = tempDir().dir;
    const bad = join(root, 'bad.jsonl');
    writeFileSync(bad, '{"step_id":0,"role":"user","content":"a"}\n{"step_id":1,"role":"user"\n');
    const dir = join(root, '.contextfold');
    const r = await runCliInProcess(['--dir', dir, 'import', bad, '--format', 'turns']);
    expect(r.code).toBe(1);
    expect(r.stdout).toBe('');
    expect(r.stderr).toBe(
      `contextfold: UsageError: ${bad}:2: not valid JSON (unexpected end of input, expected ',' or '}' at column 27); the turns format has one {"step_id","role","content"} object per line\n`,
    );
    expect(existsSync(dir)).toBe(false);
  });

  it("'-' reads standard input, gzip or plain, told from the content; errors name standard input", () => {
    // Before, 'import -' said "-: no such file", though other commands read '-' as stdin.
    const root = tempDir().dir;
    const dir = join(root, '.contextfold');
    const transcript = readFileSync(fixture('claude-code-session.jsonl'));
    const first = runCliProcess(['--dir', dir, 'import', '-'], { input: gzipSync(transcript) });
    expect(first.stderr).toBe('');
    expect(first.code).toBe(0);
    expect(first.stdout).toMatch(
      /^imported 6 turn\(s\) from standard input \(claude-code, detected\): 6 folded; steps 0–5; session 5e551011-/,
    );
    const again = runCliProcess(
      ['--dir', dir, '--json', 'import', '-', '--format', 'claude-code'],
      {
        input: transcript,
      },
    );
    expect(JSON.parse(again.stdout)).toMatchObject({ file: '-', folded: 0, already_folded: 6 });
    const bad = runCliProcess(['--dir', join(root, 'other'), 'import', '-', '--format', 'turns'], {
      input: '{"step_id":0,"role":"user"\n',
    });
    expect(bad.code).toBe(1);
    expect(bad.stderr).toMatch(/^contextfold: UsageError: standard input:1: not valid JSON/);
    expect(existsSync(join(root, 'other'))).toBe(false);
  });

  it('without --format tells the format from the content, and says so', async () => {
    const root = tempDir().dir;
    const gz = join(root, 'session.jsonl.gz');
    writeFileSync(gz, gzipSync(readFileSync(fixture('claude-code-session.jsonl'))));
    const dir = join(root, '.contextfold');
    const r = await runCliInProcess(['--dir', dir, 'import', gz]);
    expect(r.stderr).toBe('');
    expect(r.code).toBe(0);
    expect(r.stdout).toMatch(/\(claude-code, detected\): 6 folded; steps 0–5; session 5e551011-/);
  });

  it('a file that does not say its format: one line asking for --format, nothing written', async () => {
    const root = tempDir().dir;
    const chat = join(root, 'chat.json');
    writeFileSync(chat, JSON.stringify([{ role: 'user', content: 'Which port?' }]));
    const dir = join(root, '.contextfold');
    const r = await runCliInProcess(['--dir', dir, 'import', chat]);
    expect(r.code).toBe(1);
    expect(r.stderr).toBe(
      `contextfold: UsageError: cannot tell the format of ${chat}: its messages read the same as OpenAI and Anthropic messages; pass --format (claude-code, codex, openai, anthropic, aider, swe-agent, turns)\n`,
    );
    expect(existsSync(dir)).toBe(false);
  });

  it('requires a known --format', async () => {
    const r = await runCliInProcess([
      'import',
      fixture('turns.jsonl'),
      '--format',
      'csv',
      '--json',
    ]);
    expect(r.code).toBe(1);
    expect(JSON.parse(r.stdout)).toMatchObject({
      error: 'UsageError',
      message:
        "--format must be one of claude-code, codex, openai, anthropic, aider, swe-agent, turns, got 'csv'",
    });
  });
});
