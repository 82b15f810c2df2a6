import { appendFileSync, copyFileSync, readFileSync, statSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { ContextFold } from '../../engine/context-fold.js';
import { WriteLock } from '../../store/write-lock.js';
import { TranscriptWriter } from '../../test-utils/claude-transcript.js';
import { tempDir } from '../../test-utils/temp-dir.js';
import { ingestTranscript, stateLockPath, uuidLogPath } from './ingest.js';
import { runHook } from './run-hook.js';
import { sessionPaths } from './session-paths.js';

const SESSION = '0dd5e551-0000-4000-8000-00000000beef';

/** A session of `n` exchanges, each with a tool call (the last one still open). */
function session(n: number): TranscriptWriter {
  const w = new TranscriptWriter(SESSION);
  for (let i = 0; i < n; i++) {
    w.user(`Check service_${i}`);
    w.assistant(`Checking service_${i}.`, [
      { name: 'Bash', input: { command: `systemctl status service_${i}` }, result: `active ${i}` },
    ]);
  }
  return w;
}

function signal(): { wait: Promise<void>; fire: () => void } {
  let fire = () => {};
  const wait = new Promise<void>((r) => {
    fire = r;
  });
  return { wait, fire };
}

/** `p`, or after `ms` if it never settles (a run that the fix makes wait for the other one). */
const within = (p: Promise<void>, ms = 500) =>
  Promise.race([p, new Promise<void>((r) => setTimeout(r, ms))]);

describe('ingestTranscript: runs of one session at once', () => {
  it('two runs interleaved as two processes can be leave the state and uuid log agreeing, as one after the other', async () => {
    const root = tempDir().dir;
    const transcript = join(root, 't.jsonl');
    const { storeDir, statePath } = sessionPaths(join(root, '.contextfold'), SESSION);
    const w = session(40);
    writeFileSync(transcript, w.text(0, 100));
    const open = () => ContextFold.open({ dir: storeDir, tokenizer: 'reference' });
    const a = await open();
    const b = await open();
    try {
      // A folds once B has written the uuid log; B saves its state once A is done: unlocked, A
      // rewrites the log shorter than the state B saves says it is.
      const bLogged = signal();
      const aDone = signal();
      const aFold = a.foldMany.bind(a);
      a.foldMany = async (inputs, opts) => {
        await within(bLogged.wait);
        return aFold(inputs, opts);
      };
      const bFold = b.foldMany.bind(b);
      const bRedact = b.redactTexts.bind(b);
      let bFolded = false;
      b.foldMany = async (inputs, opts) => {
        const r = await bFold(inputs, opts);
        bFolded = true;
        return r;
      };
      b.redactTexts = async (texts) => {
        if (bFolded) {
          bLogged.fire();
          await within(aDone.wait);
        }
        return bRedact(texts);
      };
      const options = { transcriptPath: transcript, statePath, mode: 'prompt' as const };
      const runA = ingestTranscript(a, options).finally(aDone.fire);
      appendFileSync(transcript, w.text(100));
      await Promise.all([runA, ingestTranscript(b, options)]);

      const state = JSON.parse(readFileSync(statePath, 'utf8')) as { uuids_bytes: number };
      expect(statSync(uuidLogPath(statePath)).size).toBe(state.uuids_bytes);
      // A resumed session (a new transcript file) is read from the start with every uuid known.
      const resumed = join(root, 'resumed.jsonl');
      copyFileSync(transcript, resumed);
      const again = await ingestTranscript(a, { ...options, transcriptPath: resumed });
      expect(again.folded).toBe(0);
      expect(again.turns).toBe(80);
      expect((await a.entries()).map((e) => e.step_id)).toEqual(
        Array.from({ length: 79 }, (_, i) => i),
      );
    } finally {
      await a.close({ compact: false });
      await b.close({ compact: false });
    }
  });
});

describe('runHook while another run of the session ingests', () => {
  it('answers from what is folded, folds nothing and says so in systemMessage', async () => {
    const root = tempDir().dir;
    const transcript = join(root, `${SESSION}.jsonl`);
    const baseDir = join(root, '.contextfold');
    const { statePath } = sessionPaths(baseDir, SESSION);
    const w = session(3);
    w.compact('Summary: services checked.');
    w.user('Continue');
    w.assistant('Continuing.');
    writeFileSync(transcript, w.text());
    const input = { session_id: SESSION, transcript_path: transcript, cwd: root };
    const first = await runHook({
      event: 'user-prompt-submit',
      baseDir,
      input: { ...input, prompt: 'hi' },
    });
    expect(first.archived_before).toBe(6);
    w.user('Check service_9');
    w.assistant('Checking.');
    appendFileSync(transcript, w.text(w.rows.length - 2));
    const before = readFileSync(statePath, 'utf8');

    const other = new WriteLock(stateLockPath(statePath));
    other.tryAcquire();
    try {
      const out = await runHook({
        event: 'user-prompt-submit',
        baseDir,
        input: { ...input, prompt: 'What did systemctl status service_1 print?' },
        lockTimeoutMs: 50,
      });
      expect(out.ingest.folded).toBe(0);
      expect(out.archived_before).toBe(6);
      expect(out.output?.hookSpecificOutput?.additionalContext).toContain('active 1');
      expect(out.output?.systemMessage).toMatch(/^contextfold: another hook run of this session/u);
      expect(readFileSync(statePath, 'utf8')).toBe(before);
    } finally {
      other.close();
    }
    const next = await runHook({
      event: 'user-prompt-submit',
      baseDir,
      input: { ...input, prompt: 'x' },
    });
    expect(next.ingest.folded).toBeGreaterThan(0);
    expect(next.output?.systemMessage).toBeUndefined();
  });
});
