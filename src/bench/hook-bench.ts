import { spawnSync } from 'node:child_process';
import { mkdirSync, readdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';

const SESSION = '0dd5e551-0000-4000-8000-00000000beef';

/** A Claude Code transcript of `exchanges` prompt / answer / tool call / result rounds. */
function transcript(exchanges: number): string {
  const rows: string[] = [];
  let n = 0;
  let parent: string | null = null;
  const row = (type: string, extra: Record<string, unknown>) => {
    const uuid = `00000000-0000-4000-8000-${String(++n).padStart(12, '0')}`;
    rows.push(
      JSON.stringify({
        parentUuid: parent,
        isSidechain: false,
        userType: 'external',
        cwd: '/home/dev/app',
        sessionId: SESSION,
        version: '2.1.39',
        gitBranch: 'main',
        type,
        uuid,
        timestamp: '2026-03-01T10:00:00.000Z',
        ...extra,
      }),
    );
    parent = uuid;
  };
  for (let i = 0; i < exchanges; i++) {
    const id = `msg_${String(i).padStart(8, '0')}`;
    const message = (content: unknown[]) => ({
      model: 'claude-opus-4-6',
      id,
      type: 'message',
      role: 'assistant',
      content,
      stop_reason: null,
      stop_sequence: null,
      usage: { input_tokens: 1, output_tokens: 1 },
    });
    row('user', {
      message: { role: 'user', content: `Step ${i}: check service s${i % 97} and its port` },
    });
    row('assistant', {
      message: message([{ type: 'text', text: `Looking at service s${i % 97} (round ${i}).` }]),
    });
    const toolId = `toolu_${id}_0`;
    row('assistant', {
      message: message([
        {
          type: 'tool_use',
          id: toolId,
          name: 'Bash',
          input: { command: `systemctl status s${i % 97}` },
        },
      ]),
    });
    const result = `s${i % 97}.service - worker ${i}\n   Active: active (running)\n   port ${5000 + (i % 97)}\n${'log line\n'.repeat(20)}`;
    row('user', {
      message: {
        role: 'user',
        content: [{ tool_use_id: toolId, type: 'tool_result', content: result }],
      },
      toolUseResult: result,
    });
  }
  return rows.map((r) => `${r}\n`).join('');
}

/**
 * Times the Claude Code hook (`contextfold hook user-prompt-submit`) as Claude Code runs it: a
 * fresh process per prompt, on a transcript of about 2,000 turns. Runs until the whole
 * transcript is archived (a run folds at most 400 turns), then measures warm runs (nothing new
 * to fold but the prompt's page-in).
 */
export function benchHook(work: string, exchanges = 1000): Record<string, unknown> {
  const cli = fileURLToPath(new URL('../cli/bin.js', import.meta.url));
  const dir = join(work, 'hook');
  mkdirSync(dir, { recursive: true });
  const path = join(dir, 'transcript.jsonl');
  writeFileSync(path, transcript(exchanges));
  const run = (prompt: string): number => {
    const input = JSON.stringify({
      session_id: SESSION,
      transcript_path: path,
      cwd: dir,
      hook_event_name: 'UserPromptSubmit',
      prompt,
    });
    const t = performance.now();
    const r = spawnSync(
      process.execPath,
      [cli, '--dir', join(dir, '.contextfold'), 'hook', 'user-prompt-submit'],
      {
        input,
        encoding: 'utf8',
      },
    );
    const ms = performance.now() - t;
    if (r.status !== 0) throw new Error(`hook failed: ${r.stderr}`);
    return ms;
  };
  const catchUp: number[] = [];
  for (let i = 0; i < 20; i++) catchUp.push(run(`which port does service s${i} use?`));
  const warm: number[] = [];
  for (let i = 0; i < 7; i++) warm.push(run(`what is the port of service s${20 + i}?`));
  const sorted = [...warm].sort((a, b) => a - b);
  const sessions = join(dir, '.contextfold', 'claude-code', SESSION, 'cold_nodes');
  return {
    transcript_rows: exchanges * 4,
    archived_turns: readdirSync(sessions).length,
    first_runs_ms: catchUp.slice(0, 6).map((x) => Math.round(x)),
    warm_p50_ms: Math.round(sorted[sorted.length >> 1]!),
    warm_max_ms: Math.round(sorted[sorted.length - 1]!),
  };
}
