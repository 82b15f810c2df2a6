import { existsSync, readdirSync, readFileSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { ContextFold } from '../engine/context-fold.js';
import { summarizeTurn } from '../harness/summarize.js';
import { isContextFoldError } from '../protocol/errors.js';
import { fakeSecrets } from '../test-utils/fake-secrets.js';
import { tempDir } from '../test-utils/temp-dir.js';
import { importFile, loadHistoryFile } from './import-file.js';
import { importTurns } from './import-turns.js';
import type { ImportFormat } from './turn.js';

const fixture = (name: string) => new URL(`./fixtures/${name}`, import.meta.url).pathname;
const cases: [ImportFormat, string][] = [
  ['claude-code', 'claude-code-session.jsonl'],
  ['claude-code', 'claude-code-subagent.jsonl'],
  ['openai', 'openai-chat.json'],
  ['anthropic', 'anthropic-messages.json'],
  ['turns', 'turns.jsonl'],
];

describe('importFile', () => {
  it('refuses options without a file with one usage error (it was a read of undefined)', async () => {
    const cf = await ContextFold.open({ dir: join(tempDir().dir, '.contextfold') });
    for (const options of [{}, { file: '' }, { file: 5 }]) {
      await expect(importFile(cf, options as never)).rejects.toMatchObject({
        code: 'USAGE',
        message: expect.stringMatching(/^import needs \{ file \}/),
      });
    }
    // A misspelt option was ignored: `summarize` (not `summarise`) left the default summaries.
    const turns = [{ role: 'user' as const, content: 'hi' }] as never;
    const typos: [() => Promise<unknown>, RegExp][] = [
      [
        () => importTurns(cf, turns, { summarize: () => 's' } as never),
        /^importTurns has no option 'summarize' \(options: summarise, onProgress\)/,
      ],
      [
        () => importFile(cf, { file: fixture('openai-chat.json'), fromat: 'openai' } as never),
        /^importFile has no option 'fromat'/,
      ],
    ];
    for (const [fn, re] of typos) {
      await expect(fn()).rejects.toMatchObject({
        code: 'USAGE',
        message: expect.stringMatching(re),
      });
    }
    expect(() =>
      loadHistoryFile({ file: fixture('openai-chat.json'), fromat: 'x' } as never),
    ).toThrow(/^loadHistoryFile has no option 'fromat' \(options: file, format\)/);
    await cf.close();
  });

  it.each(cases)(
    '%s %s: folds every turn at its history position; the store validates',
    async (format, name) => {
      const dir = join(tempDir().dir, '.contextfold');
      const cf = await ContextFold.open({ dir });
      const r = await importFile(cf, { file: fixture(name), format });
      expect(r.folded).toBe(r.history.turns.length);
      const entries = await cf.entries();
      expect(entries.map((e) => e.step_id)).toEqual(r.history.turns.map((t) => t.step_id));
      expect((await cf.validate()).ok).toBe(true);
      // Bytes in = bytes out: the verified hydration is the rendered turn, exactly.
      for (const t of r.history.turns) {
        const h = await cf.hydrate(t.step_id, { maxTokens: 1_000_000 });
        expect(h.content).toBe(t.content === '' ? summarizeTurn(t) : t.content);
        expect(entries.find((e) => e.step_id === t.step_id)!.summary).toBe(summarizeTurn(t));
      }
      await cf.close();
    },
  );

  it('re-importing the same history is a no-op with the same hashes (deterministic)', async () => {
    const dir = join(tempDir().dir, '.contextfold');
    const cf = await ContextFold.open({ dir });
    const first = await importFile(cf, {
      file: fixture('claude-code-session.jsonl'),
      format: 'claude-code',
    });
    const again = await importFile(cf, {
      file: fixture('claude-code-session.jsonl'),
      format: 'claude-code',
    });
    expect(again.folded).toBe(0);
    expect(again.already_folded).toBe(first.turns);
    const other = await ContextFold.open({ dir: join(tempDir().dir, '.contextfold') });
    const fresh = await importFile(other, {
      file: fixture('claude-code-session.jsonl'),
      format: 'claude-code',
    });
    expect(fresh.results.map((x) => x.projection_sha256)).toEqual(
      first.results.map((x) => x.projection_sha256),
    );
    await cf.close();
    await other.close();
  });

  it('refuses a different history over the same steps and writes nothing', async () => {
    const dir = join(tempDir().dir, '.contextfold');
    const cf = await ContextFold.open({ dir });
    await importFile(cf, { file: fixture('turns.jsonl'), format: 'turns' });
    const before = readdirSync(join(dir, 'cold_nodes')).sort();
    const index = await cf.entries();
    const history = loadHistoryFile({ file: fixture('openai-chat.json'), format: 'openai' });
    let error: unknown;
    try {
      await importTurns(cf, history.turns);
    } catch (e) {
      error = e;
    }
    expect(isContextFoldError(error) && error.code).toBe('STEP_CONFLICT');
    expect(readdirSync(join(dir, 'cold_nodes')).sort()).toEqual(before);
    expect(await cf.entries()).toEqual(index);
    expect((await cf.validate()).ok).toBe(true);
    await cf.close();
  });

  it('writes nothing at all when the input is malformed', async () => {
    const root = tempDir().dir;
    const dir = join(root, '.contextfold');
    const cf = await ContextFold.open({ dir });
    const bad = join(root, 'bad.jsonl');
    const text = readFileSync(fixture('turns.jsonl'), 'utf8').replace(
      '"role": "tool"',
      '"role": 7',
    );
    (await import('node:fs')).writeFileSync(bad, text);
    await expect(importFile(cf, { file: bad, format: 'turns' })).rejects.toThrow(
      /bad\.jsonl:3: "role" must be/,
    );
    expect(existsSync(join(dir, 'cold_nodes'))).toBe(false);
    await cf.close();
  });
});

describe('importTurns: no piece of a secret in the summary', () => {
  it('summarises the redacted turn, so a secret cut short by the summary never reaches the store', async () => {
    const s = fakeSecrets();
    // The command is longer than a summary's command slot: a cut inside the token used to
    // store `export GITHUB_TOKEN=ghp_…` with all but a few characters of it.
    const content = `$ export GITHUB_TOKEN=${s.githubToken} && gh release create v1.2.3 --notes-file NOTES.md\nrelease created`;
    const dir = join(tempDir().dir, '.contextfold');
    const cf = await ContextFold.open({ dir });
    await importTurns(cf, [{ step_id: 0, role: 'assistant', content }]);
    await cf.close();
    const fragment = s.githubToken.slice(4, 16);
    for (const f of readdirSync(dir, { recursive: true, encoding: 'utf8' })) {
      const path = join(dir, f);
      if (!statSync(path).isFile()) continue;
      expect(readFileSync(path).includes(fragment), f).toBe(false);
    }
  });
});

describe('importTurns: a summary depends on its own turn only', () => {
  it('re-importing a grown history whose new turn reveals a value an old one printed bare is a no-op for the old turn', async () => {
    const s = fakeSecrets('grown');
    const t0 = { step_id: 0, role: 'tool' as const, content: `trying ${s.postgresPassword} now` };
    const t1 = {
      step_id: 1,
      role: 'assistant' as const,
      content: `psql postgres://app:${s.postgresPassword}@db/billing`,
    };
    const dir = join(tempDir().dir, '.contextfold');
    const cf = await ContextFold.open({ dir });
    try {
      await importTurns(cf, [t0]);
      // Redacted together, t1's URL password made t0's summary differ: a StepConflictError.
      const r = await importTurns(cf, [t0, t1]);
      expect(r.results.map((x) => x.already_folded)).toEqual([true, false]);
    } finally {
      await cf.close();
    }
  });
});
