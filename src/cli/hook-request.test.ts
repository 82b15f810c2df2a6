import { readdirSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { TranscriptWriter } from '../test-utils/claude-transcript.js';
import { tempDir } from '../test-utils/temp-dir.js';
import { type HookIo, runHookRequest } from './hook-request.js';

function captured() {
  const out: string[] = [];
  const err: string[] = [];
  const io: HookIo = { out: (t) => out.push(t), err: (t) => err.push(t) };
  return { io, out, err };
}

describe('runHookRequest warnings', () => {
  it('tells each warning once in a run, on stderr and in the systemMessage', async () => {
    const root = tempDir().dir;
    const transcript = join(root, 's.jsonl');
    const w = new TranscriptWriter('s');
    w.user('Set PostgreSQL to port 5433');
    w.assistant('FATAL: role "billing" does not exist');
    w.compact('port 5433 set');
    w.user('next task');
    writeFileSync(transcript, w.text());
    const request = {
      v: 1 as const,
      event: 'user-prompt-submit',
      stdin: JSON.stringify({ session_id: 's', transcript_path: transcript, prompt: 'x' }),
      redact: true,
      cwd: root,
    };
    expect(await runHookRequest(request, captured().io)).toBe(0);
    const store = join(root, '.contextfold', 'claude-code', 's');
    for (const f of readdirSync(store)) if (f.startsWith('index-')) rmSync(join(store, f));
    // The caller's warning (the hook client's: the server did not answer) given twice.
    const late = 'contextfold: the hook server did not answer within 10 s';
    const run = captured();
    expect(await runHookRequest(request, run.io, undefined, [late, late])).toBe(0);
    const lines: string[] = JSON.parse(run.out.join('')).systemMessage.split('\n');
    expect(lines).toEqual([
      late,
      expect.stringMatching(/^contextfold: warning: the derived index/),
    ]);
    // The caller wrote its own warning on stderr; the run writes the store's, once.
    expect(run.err).toEqual([`${lines[1]}\n`]);
  });
});
