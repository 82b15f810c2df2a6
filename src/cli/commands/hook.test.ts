import { spawnSync } from 'node:child_process';
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { TranscriptWriter } from '../../test-utils/claude-transcript.js';
import { CLI } from '../../test-utils/cli.js';
import { tempDir } from '../../test-utils/temp-dir.js';

// The real hook process, as Claude Code runs it: JSON on stdin, JSON (or nothing) on stdout.
function hook(args: string[], input: unknown, cwd: string) {
  const r = spawnSync(process.execPath, [CLI, ...args], {
    cwd,
    input: typeof input === 'string' ? input : JSON.stringify(input),
    encoding: 'utf8',
  });
  return { code: r.status, stdout: r.stdout, stderr: r.stderr };
}

function project() {
  const root = tempDir();
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
  return { root, transcript };
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

  it('resolves the default store relative to the session cwd, one store per session', () => {
    const p = project();
    const elsewhere = tempDir();
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
    ];
    for (const [args, input, message] of cases) {
      const r = hook(args, input, p.root);
      expect(r.code).toBe(1);
      expect(r.stdout).toBe('');
      expect(r.stderr).toMatch(message);
      expect(r.stderr.trim().split('\n')).toHaveLength(1);
    }
  });

  it('a store error (damaged state file) still exits 1, not its IPCF exit code', () => {
    const p = project();
    const input = { session_id: 'abc', transcript_path: p.transcript, cwd: p.root, prompt: 'x' };
    expect(hook(['hook', 'user-prompt-submit'], input, p.root).code).toBe(0);
    writeFileSync(join(p.root, '.contextfold', 'claude-code', 'abc.state.json'), '{');
    const r = hook(['hook', 'user-prompt-submit'], input, p.root);
    expect(r.code).toBe(1);
    expect(r.stderr).toMatch(
      /^contextfold: IntegrityCheckError: hook state file is not valid JSON/,
    );
  });
});

describe('contextfold install claude-code', () => {
  it('writes hooks that run this CLI, idempotently (--json)', () => {
    const root = tempDir();
    const run = () =>
      spawnSync(process.execPath, [CLI, 'install', 'claude-code', '--project', '--json'], {
        cwd: root,
        encoding: 'utf8',
      });
    const first = JSON.parse(run().stdout);
    expect(first).toMatchObject({
      settings: join(root, '.claude', 'settings.json'),
      changed: true,
      backup: null,
    });
    const second = JSON.parse(run().stdout);
    expect(second).toMatchObject({ changed: false });
    const again = spawnSync(
      process.execPath,
      [CLI, 'install', 'claude-code', '--project', '--user'],
      { cwd: root, encoding: 'utf8' },
    );
    expect(again.status).toBe(1);
    expect(again.stderr).toBe('contextfold: UsageError: give --project or --user, not both\n');
  });
});
