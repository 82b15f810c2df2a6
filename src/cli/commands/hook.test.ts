import { spawn, spawnSync } from 'node:child_process';
import {
  appendFileSync,
  existsSync,
  mkdirSync,
  readdirSync,
  readFileSync,
  rmSync,
  writeFileSync,
} from 'node:fs';
import { dirname, join } from 'node:path';
import { beforeAll, describe, expect, it } from 'vitest';
import { WriteLock } from '../../store/write-lock.js';
import { TranscriptWriter } from '../../test-utils/claude-transcript.js';
import { CLI } from '../../test-utils/cli.js';
import { type InstalledCopy, installedCopy } from '../../test-utils/installed-copy.js';
import { tempDir } from '../../test-utils/temp-dir.js';

// The real hook process, as Claude Code runs it: JSON on stdin, JSON (or nothing) on stdout.
function hook(args: string[], input: unknown, cwd: string, env?: NodeJS.ProcessEnv) {
  const r = spawnSync(process.execPath, [CLI, ...args], {
    cwd,
    ...(env ? { env } : {}),
    input: typeof input === 'string' ? input : JSON.stringify(input),
    encoding: 'utf8',
  });
  return { code: r.status, stdout: r.stdout, stderr: r.stderr };
}

function project() {
  const root = tempDir().dir;
  const transcript = join(root, 'abc.jsonl');
  const w = new TranscriptWriter('abc');
  w.user('Set PostgreSQL to port 5433');
  w.assistant('', [
    {
      name: 'Bash',
      input: { command: 'psql -p 5433' },
      result: 'FATAL: role "billing" does not exist',
    },
  ]);
  w.compact('port 5433 set');
  w.user('next task');
  writeFileSync(transcript, w.text());
  return { root, transcript, w };
}

/** The UserPromptSubmit input asking the project's archived question (the role on port 5433). */
function portQuestion(p: { root: string; transcript: string }) {
  return {
    session_id: 'abc',
    transcript_path: p.transcript,
    cwd: p.root,
    prompt: 'Which PostgreSQL role was missing on port 5433?',
  };
}

describe('contextfold hook (spawned as Claude Code does)', () => {
  it('user-prompt-submit prints hookSpecificOutput.additionalContext with the verified page', () => {
    const p = project();
    const r = hook(
      ['hook', 'user-prompt-submit'],
      {
        session_id: 'abc',
        transcript_path: p.transcript,
        cwd: p.root,
        permission_mode: 'default',
        hook_event_name: 'UserPromptSubmit',
        prompt: 'Which PostgreSQL role was missing on port 5433?',
      },
      p.root,
    );
    expect(r.stderr).toBe('');
    expect(r.code).toBe(0);
    const out = JSON.parse(r.stdout);
    expect(out.hookSpecificOutput.hookEventName).toBe('UserPromptSubmit');
    expect(out.hookSpecificOutput.additionalContext).toContain(
      'FATAL: role "billing" does not exist',
    );
    expect(out.hookSpecificOutput.additionalContext).toContain('<archived_record step_id="1"');
  });

  it('reads the whole input from a writer slower than the hook: a pause before it writes, then a prompt of 2 MB through the pipe', async () => {
    const p = project();
    const input = JSON.stringify({
      session_id: 'abc',
      transcript_path: p.transcript,
      cwd: p.root,
      hook_event_name: 'UserPromptSubmit',
      prompt: `Which PostgreSQL role was missing on port 5433?\n${'worker 7 heartbeat ok\n'.repeat(100_000)}`,
    });
    const child = spawn(process.execPath, [CLI, 'hook', 'user-prompt-submit'], {
      cwd: p.root,
      env: { ...process.env, CONTEXTFOLD_HOOK_SERVER: '0' },
    });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (d: Buffer) => {
      stdout += d.toString();
    });
    child.stderr.on('data', (d: Buffer) => {
      stderr += d.toString();
    });
    const exited = new Promise<number | null>((resolve) => child.on('close', resolve));
    // The hook has started reading an empty pipe by then (before: EAGAIN, an internal error).
    await new Promise((resolve) => setTimeout(resolve, 1500));
    child.stdin.end(input);
    const code = await exited;
    expect(code).toBe(0);
    const out = JSON.parse(stdout);
    expect(out.hookSpecificOutput.additionalContext).toContain(
      'FATAL: role "billing" does not exist',
    );
    // 2.2 M characters: past the scan bound, so its first and last lines are scanned, and the
    // user is told (systemMessage), as stderr says.
    expect(out.systemMessage).toMatch(
      /^contextfold: this prompt has 2,200,048 characters; the archive was searched for its first and last lines only/,
    );
    expect(stderr).toBe(`${out.systemMessage}\n`);
  });

  it('resolves the default store relative to the session cwd, one store per session', () => {
    const p = project();
    const elsewhere = tempDir().dir;
    const input = {
      session_id: 'abc',
      transcript_path: p.transcript,
      cwd: p.root,
      hook_event_name: 'PreCompact',
      trigger: 'auto',
    };
    const r = hook(['hook', 'pre-compact'], input, elsewhere);
    expect(r).toMatchObject({ code: 0, stdout: '', stderr: '' });
    const status = spawnSync(
      process.execPath,
      [CLI, '--dir', join(p.root, '.contextfold', 'claude-code', 'abc'), 'status', '--json'],
      {
        encoding: 'utf8',
      },
    );
    expect(JSON.parse(status.stdout)).toMatchObject({ nodes: 4 });
    const node = JSON.parse(
      readFileSync(
        join(p.root, '.contextfold', 'claude-code', 'abc', 'cold_nodes', 'step_000000.json'),
        'utf8',
      ),
    );
    expect(node.session_id).toBe('abc');
  });

  it("keeps the project's store when the model has cd'd into a subdirectory (the session cwd follows it)", () => {
    const p = project();
    const assets = join(p.root, 'assets');
    mkdirSync(assets);
    const input = {
      session_id: 'abc',
      transcript_path: p.transcript,
      cwd: assets,
      prompt: 'port?',
    };
    const env = { ...process.env, CLAUDE_PROJECT_DIR: p.root };
    const r = hook(['hook', 'user-prompt-submit'], input, assets, env);
    expect(r).toMatchObject({ code: 0, stderr: '' });
    expect(existsSync(join(p.root, '.contextfold', 'claude-code', 'abc.state.json'))).toBe(true);
    expect(existsSync(join(assets, '.contextfold'))).toBe(false);
  });

  it('errors exit 1 (never 2, which would block the prompt) with one line on stderr and nothing on stdout', () => {
    const p = project();
    const cases: [string[], unknown, RegExp][] = [
      [['hook', 'user-prompt-submit'], 'not json', /hook input on stdin is not JSON/],
      [
        ['hook', 'user-prompt-submit'],
        { transcript_path: p.transcript },
        /hook input: session_id: /,
      ],
      [
        ['hook', 'user-prompt-submit'],
        { session_id: '../x', transcript_path: p.transcript },
        /session_id: must be a plain id/,
      ],
      [
        ['hook', 'pre-compact'],
        { session_id: 'abc', transcript_path: p.transcript, hook_event_name: 'UserPromptSubmit' },
        /is for UserPromptSubmit/,
      ],
      [
        ['hook', 'stop'],
        { session_id: 'abc', transcript_path: p.transcript },
        /unknown hook event 'stop'/,
      ],
      [
        ['--store', join(p.root, 'team'), 'hook', 'user-prompt-submit'],
        { session_id: 'abc', transcript_path: p.transcript, prompt: 'port?' },
        /give --dir DIR, not --store/,
      ],
      [
        ['--dir', 'postgres://u@localhost:1/db', 'hook', 'user-prompt-submit'],
        { session_id: 'abc', transcript_path: p.transcript, prompt: 'port?' },
        /is a database URL; give a directory/,
      ],
      [
        ['--dir', '', 'hook', 'user-prompt-submit'],
        { session_id: 'abc', transcript_path: p.transcript, prompt: 'port?' },
        /--dir needs a directory \(it was empty\)/,
      ],
    ];
    for (const [args, input, message] of cases) {
      const r = hook(args, input, p.root);
      expect(r.code).toBe(1);
      expect(r.stdout).toBe('');
      expect(r.stderr).toMatch(message);
      expect(r.stderr.trim().split('\n')).toHaveLength(1);
    }
    // Nothing was written: not in the --store given, not in the default store.
    expect(existsSync(join(p.root, 'team'))).toBe(false);
    expect(existsSync(join(p.root, 'postgres:'))).toBe(false);
    expect(existsSync(join(p.root, '.contextfold'))).toBe(false);
    expect(existsSync(join(p.root, 'claude-code'))).toBe(false);
  });

  it('a missing transcript is never silent: a notice for a new session, an error once it was read or before a compaction', () => {
    const p = project();
    const missing = join(p.root, 'not-yet.jsonl');
    const base = { session_id: 'fresh', transcript_path: missing, cwd: p.root };
    // A new session: Claude Code runs SessionStart and the first UserPromptSubmit before it
    // creates the transcript file. One line on stderr, exit 0 (nothing to block, nothing lost).
    for (const [event, extra] of [
      ['session-start', { source: 'startup' }],
      ['user-prompt-submit', { prompt: 'hello' }],
    ] as const) {
      const r = hook(['hook', event], { ...base, ...extra }, p.root);
      expect(r.code, event).toBe(0);
      expect(r.stdout, event).toBe('');
      expect(r.stderr, event).toBe(
        `contextfold: transcript not found yet: ${missing} (a new session; nothing to archive until Claude Code writes it)\n`,
      );
    }
    // Before a compaction there must be a transcript to archive: the user is told in the
    // systemMessage (exit 0: Claude Code reads the JSON only then), and on stderr.
    const pc = hook(['hook', 'pre-compact'], { ...base, trigger: 'auto' }, p.root);
    const nothing = `contextfold: UsageError (USAGE): transcript not found: ${missing}; nothing can be archived before this compaction (contextfold hook pre-compact)`;
    expect(pc.code).toBe(0);
    expect(JSON.parse(pc.stdout)).toEqual({ systemMessage: nothing });
    expect(pc.stderr).toBe(`${nothing}\n`);
    // A transcript read before that disappears: the same, and what is archived is still paged in.
    const input = portQuestion(p);
    expect(hook(['hook', 'user-prompt-submit'], input, p.root).code).toBe(0);
    rmSync(p.transcript);
    const gone = hook(['hook', 'user-prompt-submit'], input, p.root);
    expect(gone.code).toBe(0);
    const out = JSON.parse(gone.stdout);
    expect(out.systemMessage).toMatch(
      /^contextfold: UsageError \(USAGE\): transcript not found: .*; it was read before and is gone/,
    );
    expect(out.hookSpecificOutput.additionalContext).toContain('FATAL: role "billing"');
    expect(gone.stderr).toBe(`${out.systemMessage}\n`);
  });

  it('a store warning of a run that goes on is the systemMessage Claude Code shows the user, and a line on stderr', () => {
    const p = project();
    const input = portQuestion(p);
    expect(hook(['hook', 'user-prompt-submit'], input, p.root).code).toBe(0);
    const store = join(p.root, '.contextfold', 'claude-code', 'abc');
    for (const f of readdirSync(store)) if (f.startsWith('index-')) rmSync(join(store, f));
    const r = hook(['hook', 'user-prompt-submit'], input, p.root);
    expect(r.code).toBe(0);
    const warning = /^contextfold: warning: the derived index is missing: rebuilt index-/;
    expect(r.stderr).toMatch(warning);
    const out = JSON.parse(r.stdout);
    expect(out.hookSpecificOutput.additionalContext).toContain('FATAL: role "billing"');
    expect(out.systemMessage).toMatch(warning);
    expect(out.systemMessage).toBe(r.stderr.trim());
  });

  it('a refused hook state or store exits 0 with a systemMessage naming the error and its path, and pages in nothing', () => {
    const p = project();
    const input = portQuestion(p);
    expect(JSON.parse(hook(['hook', 'user-prompt-submit'], input, p.root).stdout)).toHaveProperty(
      'hookSpecificOutput',
    );
    const statePath = join(p.root, '.contextfold', 'claude-code', 'abc.state.json');
    const state = readFileSync(statePath);
    writeFileSync(statePath, '{');
    const r = hook(['hook', 'user-prompt-submit'], input, p.root);
    expect(r.code).toBe(0);
    expect(JSON.parse(r.stdout)).toEqual({
      systemMessage: `contextfold: IntegrityCheckError (INTEGRITY_CHECK): hook state file is not valid JSON: ${statePath}; move it away to re-read the transcript`,
    });
    expect(r.stderr).toBe(`${JSON.parse(r.stdout).systemMessage}\n`);
    // A tampered store: refused when it is opened; nothing of it reaches the prompt.
    writeFileSync(statePath, state);
    const journal = join(p.root, '.contextfold', 'claude-code', 'abc', 'recall_index.journal');
    writeFileSync(
      journal,
      readFileSync(journal, 'utf8').replace('"evicted":false', '"evicted":true'),
    );
    const t = hook(['hook', 'user-prompt-submit'], input, p.root);
    expect(t.code).toBe(0);
    const out = JSON.parse(t.stdout);
    expect(out).toEqual({ systemMessage: expect.stringContaining(journal) });
    expect(out.systemMessage).toMatch(/^contextfold: IntegrityCheckError \(INTEGRITY_CHECK\): /);
    expect(out.systemMessage.split('\n')).toHaveLength(1);
    expect(t.stderr).toBe(`${out.systemMessage}\n`);
  });

  it("the store's write lock held past the hook's wait: exit 0, the page from what is folded, and what was skipped", () => {
    const p = project();
    const input = portQuestion(p);
    expect(hook(['hook', 'user-prompt-submit'], input, p.root).code).toBe(0);
    const n = p.w.rows.length;
    p.w.assistant('Starting the next task.');
    p.w.user('and then?');
    appendFileSync(p.transcript, p.w.text(n));
    const other = new WriteLock(join(p.root, '.contextfold', 'claude-code', 'abc', 'write.lock'));
    expect(other.tryAcquire()).toBe(true);
    try {
      const started = Date.now();
      const r = hook(['hook', 'user-prompt-submit'], input, p.root);
      expect(Date.now() - started).toBeLessThan(12_000);
      expect(r.code).toBe(0);
      const out = JSON.parse(r.stdout);
      expect(out.hookSpecificOutput.additionalContext).toContain('FATAL: role "billing"');
      const lines: string[] = out.systemMessage.split('\n');
      expect(lines).toContainEqual(
        expect.stringMatching(
          /^contextfold: LockTimeoutError \(LOCK_TIMEOUT\): store is locked by another writer for more than 5000 ms: .*write\.lock .*; this run folded nothing \(the next run tries again\) and answered from what was already archived$/,
        ),
      );
      expect(new Set(lines).size).toBe(lines.length);
      expect(r.stderr.trim().split('\n').sort()).toEqual([...lines].sort());
    } finally {
      other.close();
    }
  });
});

describe('contextfold install claude-code', () => {
  const tmp = tempDir('cf-install-');
  let copy: InstalledCopy;
  beforeAll(() => {
    copy = installedCopy(join(tmp.dir, 'prefix'));
    return () => tmp.cleanup();
  });
  const nodeDir = dirname(process.execPath);
  const install = (bin: string, args: string[], cwd: string, pathEnv: string) =>
    spawnSync(process.execPath, [bin, 'install', 'claude-code', ...args], {
      cwd,
      encoding: 'utf8',
      env: { ...process.env, PATH: pathEnv },
    });

  it('from this checkout, writes hooks that run the installed contextfold on PATH, idempotently (--json)', () => {
    const root = tempDir().dir;
    const pathEnv = `${copy.binDir}:${nodeDir}`;
    const first = install(CLI, ['--project', '--json'], root, pathEnv);
    expect(first.stderr).toBe('');
    expect(JSON.parse(first.stdout)).toMatchObject({
      settings: join(root, '.claude', 'settings.json'),
      changed: true,
      backup: null,
      command: join(copy.binDir, 'contextfold'),
    });
    const settings = readFileSync(join(root, '.claude', 'settings.json'), 'utf8');
    expect(settings).not.toContain(dirname(dirname(CLI))); // never this checkout's dist/
    expect(JSON.parse(install(CLI, ['--project', '--json'], root, pathEnv).stdout)).toMatchObject({
      changed: false,
    });
    const again = install(CLI, ['--project', '--user'], root, pathEnv);
    expect(again.status).toBe(1);
    expect(again.stderr).toBe('contextfold: UsageError: give --project or --user, not both\n');
  });

  it('the written hook command runs as Claude Code runs it (sh -c, JSON on stdin)', () => {
    const p = project();
    const r = install(copy.binPath, ['--project', '--json'], p.root, nodeDir);
    expect(JSON.parse(r.stdout).command).toBe(`node ${copy.binPath}`);
    const s = JSON.parse(readFileSync(join(p.root, '.claude', 'settings.json'), 'utf8'));
    const command: string = s.hooks.UserPromptSubmit[0].hooks[0].command;
    expect(command).toBe(`node ${copy.binPath} hook user-prompt-submit`);
    const run = spawnSync('sh', ['-c', command], {
      cwd: p.root,
      encoding: 'utf8',
      env: { ...process.env, PATH: nodeDir, CLAUDE_PROJECT_DIR: p.root },
      input: JSON.stringify({
        session_id: 'abc',
        transcript_path: p.transcript,
        cwd: p.root,
        hook_event_name: 'UserPromptSubmit',
        prompt: 'Which PostgreSQL role was missing on port 5433?',
      }),
    });
    expect(run.stderr).toBe('');
    expect(run.status).toBe(0);
    expect(JSON.parse(run.stdout).hookSpecificOutput.additionalContext).toContain(
      'FATAL: role "billing" does not exist',
    );
  });

  it('refuses, in one line and writing nothing, a checkout without an installed copy', () => {
    const root = tempDir().dir;
    const r = install(CLI, ['--project'], root, nodeDir);
    expect(r.status).toBe(1);
    expect(r.stdout).toBe('');
    expect(r.stderr).toMatch(
      /^contextfold: UsageError: contextfold runs from a source checkout \(.+\) whose dist\/ is rebuilt by npm run build and npm test, and no installed contextfold is on PATH: install a copy first/,
    );
    expect(r.stderr.trim().split('\n')).toHaveLength(1);
    expect(existsSync(join(root, '.claude'))).toBe(false);
  });
});
