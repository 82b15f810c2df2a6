import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { ContextFold } from '../../engine/context-fold.js';
import type { Message } from '../../harness/messages.js';
import { Session } from '../../harness/session.js';
import { readEvents } from '../../harness/session-events.js';
import { importFile } from '../../import/import-file.js';
import { TranscriptWriter } from '../../test-utils/claude-transcript.js';
import { tempDir } from '../../test-utils/temp-dir.js';
import { runHook } from './run-hook.js';
import { sessionPaths } from './session-paths.js';

const SESSION = '0dd5e551-0000-4000-8000-0000000051e9';

interface Call {
  name: string;
  input: unknown;
  result: string;
  isError?: boolean;
}
type Exchange = { user: string } | { assistant: string; calls?: Call[] };

/** One history, written as a Claude Code transcript and as the harness's neutral messages. */
const HISTORY: Exchange[] = [
  { user: 'Set PostgreSQL to port 5433 in config/database.yml' },
  {
    assistant: 'Editing the config.',
    calls: [
      {
        name: 'Edit',
        input: { file_path: 'config/database.yml', old_string: '5432', new_string: '5433' },
        result: 'updated',
      },
    ],
  },
  {
    assistant: '',
    calls: [
      {
        name: 'Bash',
        input: { command: 'mix ecto.migrate' },
        result: 'MigrationError: billing_invoices exists',
        isError: true,
      },
      {
        name: 'Read',
        input: { file_path: 'priv/repo/migrations/0001.exs' },
        result: 'create table(:billing_invoices)',
      },
    ],
  },
  { assistant: 'Port 5433 is set; the billing_invoices migration fails.' },
  { user: 'Now write the README section about deployment' },
  { assistant: 'Done: README.md has a deployment section.' },
  { user: 'Which MigrationError did mix ecto.migrate print?' },
];

function transcript(history: readonly Exchange[]): string {
  const w = new TranscriptWriter(SESSION);
  for (const x of history) {
    if ('user' in x) w.user(x.user);
    else w.assistant(x.assistant, x.calls ?? []);
  }
  return w.text();
}

/** The same history as harness messages (tool ids as the transcript writer gives them). */
function messages(history: readonly Exchange[]): Message[] {
  const out: Message[] = [];
  let msg = 0;
  for (const x of history) {
    if ('user' in x) {
      out.push({ role: 'user', content: x.user });
      continue;
    }
    msg++;
    const id = (i: number) => `toolu_msg_${String(msg).padStart(8, '0')}_${i}`;
    const calls = x.calls ?? [];
    out.push({
      role: 'assistant',
      content: x.assistant,
      ...(calls.length > 0
        ? { toolCalls: calls.map((c, i) => ({ id: id(i), name: c.name, input: c.input })) }
        : {}),
    });
    for (const [i, c] of calls.entries()) {
      out.push({
        role: 'tool',
        toolCallId: id(i),
        toolName: c.name,
        content: c.result,
        ...(c.isError ? { isError: true } : {}),
      });
    }
  }
  return out;
}

async function storeEntries(dir: string) {
  const cf = await ContextFold.open({ dir });
  try {
    const entries = await cf.entries();
    const v = await cf.validate();
    return { ids: entries.map((e) => [e.step_id, e.payload_sha256] as const), ok: v.ok, v };
  } finally {
    await cf.close({ compact: false });
  }
}

describe('one step-id rule across import, the Claude Code hook and a Session (issue 15)', () => {
  it('import, then the hook, then a Session on the same history: one set of step ids, no conflict, validate clean', async () => {
    const root = tempDir().dir;
    const file = join(root, `${SESSION}.jsonl`);
    writeFileSync(file, transcript(HISTORY));
    const baseDir = join(root, '.contextfold');
    const store = sessionPaths(baseDir, SESSION).storeDir;

    // 1. import the transcript into the store the hook uses for this session.
    const engine = await ContextFold.open({ dir: store });
    const imported = await importFile(engine, { file, format: 'claude-code' });
    await engine.close();
    expect(imported.folded).toBe(7); // turns: user, edit, bash+read, text, user, text, user
    const afterImport = await storeEntries(store);
    expect(afterImport.ids.map(([s]) => s)).toEqual([0, 1, 2, 3, 4, 5, 6]);

    // 2. the hook on the same transcript: every turn it folds is already there, byte for byte.
    const hook = await runHook({
      event: 'user-prompt-submit',
      baseDir,
      input: {
        session_id: SESSION,
        transcript_path: file,
        cwd: root,
        prompt: 'Which MigrationError did mix ecto.migrate print?',
      },
    });
    expect(hook.ingest.folded).toBeGreaterThan(0);
    expect(await storeEntries(store)).toEqual(afterImport);

    // 3. a Session over the same history folds every older turn into the same store.
    const session = await Session.open({
      dir: store,
      budget: 50_000,
      keepRecent: 0,
      foldThreshold: 0,
    });
    const history = messages(HISTORY);
    await session.append(history.slice(0, -1));
    const pack = await session.beforeTurn(history.at(-1) as Message & { role: 'user' });
    await session.afterTurn({ role: 'assistant', content: 'It printed MigrationError.' });
    await session.close();
    const folds = readEvents(store).filter((e) => e.type === 'fold');
    // Every turn before the prompt, numbered as the import numbered it, with the import's exact
    // bytes: the session adopted each archived node instead of refolding it.
    expect(folds.map((e) => (e.type === 'fold' ? [e.step_id, e.payload_sha256] : null))).toEqual(
      afterImport.ids.slice(0, 6),
    );
    // A pack names its prompt by history position (message 9), not by step id.
    expect(pack.step_id).toBe(9);
    const after = await storeEntries(store);
    expect(after.ids).toEqual(afterImport.ids);
    expect(after.ok).toBe(true);
  });
});
