import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import type { CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import { expect, it } from 'vitest';
import { contextFoldMiddleware } from '../adapters/ai-sdk/middleware.js';
import { ContextFold } from '../engine/context-fold.js';
import { Session } from '../harness/session.js';
import { CLI, runCliInProcess } from '../test-utils/cli.js';
import { describePg, pgStoreUrl } from '../test-utils/pg.js';
import { tempDir } from '../test-utils/temp-dir.js';

describePg(
  'choosing a PostgreSQL store: --store, CONTEXTFOLD_STORE, library, middleware, MCP',
  () => {
    it('--store on the CLI, and CONTEXTFOLD_STORE when no --dir or --store is given', async () => {
      const url = pgStoreUrl('cli');
      const f = await runCliInProcess([
        '--store',
        url,
        '--json',
        'fold',
        '37',
        'PostgreSQL on port 5433',
      ]);
      expect(f.code, f.stdout + f.stderr).toBe(0);
      const before = process.env.CONTEXTFOLD_STORE;
      process.env.CONTEXTFOLD_STORE = url;
      try {
        const s = await runCliInProcess(['--json', 'status']);
        expect(JSON.parse(s.stdout)).toMatchObject({ nodes: 1 });
        const h = await runCliInProcess(['--json', 'hydrate', '37']);
        expect(JSON.parse(h.stdout)).toMatchObject({ step_id: 37, verified: true });
        // An explicit --dir wins over the environment.
        const dir = join(tempDir().dir, '.contextfold');
        const d = await runCliInProcess(['--dir', dir, '--json', 'status']);
        expect(JSON.parse(d.stdout)).toMatchObject({ code: 'STORE_NOT_FOUND', path: dir });
      } finally {
        if (before === undefined) delete process.env.CONTEXTFOLD_STORE;
        else process.env.CONTEXTFOLD_STORE = before;
      }
    });

    it('bad store URLs and missing stores are one line and exit 1', async () => {
      const bad = await runCliInProcess(['--store', 'postgres://h/db?store_id=../x', 'status']);
      expect(bad.code).toBe(1);
      expect(bad.stderr.trim().split('\n')).toHaveLength(1);
      expect(bad.stderr).toContain('store_id');
      const missing = await runCliInProcess(['--store', pgStoreUrl('none'), '--json', 'validate']);
      expect(missing.code).toBe(1);
      expect(JSON.parse(missing.stdout)).toMatchObject({ code: 'STORE_NOT_FOUND' });
      const down = await runCliInProcess(['--store', 'postgres://x@127.0.0.1:1/db', 'status']);
      expect(down.code).toBe(1);
      expect(down.stderr).toMatch(/^contextfold: StoreUnavailableError: .*127\.0\.0\.1:1/);
    });

    it('a password in the store URL is printed by no command, error or summary', async () => {
      // Trust authentication ignores the password; every output must still hide it.
      const secret = 'pw-S3cret-42';
      const url = pgStoreUrl('secret').replace(
        'postgres://contextfold@',
        `postgres://contextfold:${secret}@`,
      );
      const turns = join(tempDir().dir, 'turns.jsonl');
      writeFileSync(
        turns,
        `${[0, 1, 2, 3].map((i) => JSON.stringify({ step_id: i, role: i % 2 ? 'assistant' : 'user', content: `turn ${i} on port 5433` })).join('\n')}\n`,
      );
      const runs = [
        await runCliInProcess(['--store', url, 'pack']),
        await runCliInProcess(['--store', url, 'session', turns, '--budget', '4000']),
        await runCliInProcess(['--store', `${url}b`, 'session', turns, '--per-call']),
        await runCliInProcess(['--store', url, 'status']),
        // A password holding '@' (not percent-encoded) makes the URL unparseable.
        await runCliInProcess(['--store', `postgres://u:${secret}@x@h/db`, 'status']),
      ];
      expect(runs[1]!.code, runs[1]!.stderr).toBe(0);
      expect(runs[1]!.stdout).toContain('contextfold:***@');
      for (const r of runs) expect(r.stdout + r.stderr).not.toContain('S3cret');
    });

    it('Session.open and the AI SDK middleware put per-session stores under the store_id', async () => {
      const url = pgStoreUrl('mw');
      const mw = contextFoldMiddleware({ store: url, budget: 4000, tokenizer: 'reference' });
      const s = await mw.session('chat-1');
      expect(s.engine.dir).toContain(
        `store_id=${encodeURIComponent(`${new URL(url).searchParams.get('store_id')}/sessions/chat-1`)}`,
      );
      await s.append({ role: 'user', content: 'hello there' });
      await mw.close();
      const again = await Session.open({ dir: `${url}`, budget: 4000, tokenizer: 'reference' });
      await again.append({ role: 'user', content: 'the default session of the base store' });
      await again.close();
      const cf = await ContextFold.open({ store: url, mustExist: true });
      expect((await cf.readRecords('events')).text).toContain('the default session');
      await cf.close();
    });

    it('contextfold mcp --store serves a database store to a real MCP client', async () => {
      const url = pgStoreUrl('mcp');
      const transport = new StdioClientTransport({
        command: process.execPath,
        args: [CLI, '--store', url, 'mcp', '--create'],
        stderr: 'pipe',
      });
      const client = new Client({ name: 'contextfold-test', version: '0.0.0' });
      await client.connect(transport);
      try {
        const fold = (await client.callTool({
          name: 'fold_turn',
          arguments: {
            step_id: 4,
            summary: 'billing table migration 0042',
            content: 'ALTER TABLE billing',
          },
        })) as CallToolResult;
        expect(fold.isError).toBeFalsy();
      } finally {
        await client.close();
      }
      const cf = await ContextFold.open({ store: url, mustExist: true });
      expect((await cf.hydrate(4)).content).toBe('ALTER TABLE billing');
      await cf.close();
    });
  },
);
