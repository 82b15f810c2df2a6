import {
  appendFileSync,
  copyFileSync,
  existsSync,
  mkdirSync,
  readdirSync,
  readFileSync,
  renameSync,
  symlinkSync,
  writeFileSync,
} from 'node:fs';
import { join } from 'node:path';
import fc from 'fast-check';
import { afterAll, describe, expect, it } from 'vitest';
import { sha256Hex } from '../protocol/canonical-json.js';
import { DEFAULT_POLICY } from '../protocol/policy.js';
import { artifactHash } from '../store/cold-node.js';
import { type TestStore, testStore } from '../test-utils/backend-store.js';
import { BACKENDS, type BackendName } from '../test-utils/pg.js';
import { tempDir } from '../test-utils/temp-dir.js';
import { ContextFold } from './context-fold.js';
import type { IndexWarning } from './types.js';

type Opts = Partial<Parameters<typeof ContextFold.open>[0]>;

/** The two-turn store the failure-mode tests start from, closed (written out). */
async function foldTwoAndClose(cf: ContextFold): Promise<void> {
  await cf.foldMany([
    { stepId: 1, summary: 'one', content: 'first payload' },
    { stepId: 2, summary: 'two', content: 'second payload' },
  ]);
  await cf.close();
}

// Every suite here runs on each backend (the local store; PostgreSQL when the run has its
// server, always under CI). A test edits the store "behind the engine's back" through its
// TestStore: the files on the local store, the rows standing for them on PostgreSQL. The few
// tests of state only a directory can hold (the journal, symlinks, temp files, a corrupt
// recall_index.json) are in the local-only block at the end.
describe.each(BACKENDS)('%s', (backend: BackendName) => {
  let last: TestStore;
  /** A fresh store on this backend: `last` is its TestStore. */
  async function open(opts: Opts = {}) {
    last = testStore(backend, 'cf');
    return ContextFold.open({ store: last.where, tokenizer: 'reference', ...opts });
  }
  /** The same store again, as a new process would open it. */
  function reopen(cf: ContextFold, opts: Opts = {}) {
    return ContextFold.open({ store: cf.dir, tokenizer: 'reference', ...opts });
  }

  describe('lossless fold → store → hydrate (CONF-01/02/05)', () => {
    const payloads: [string, Uint8Array][] = [
      ['CRLF', Buffer.from('line one\r\nline two\r\n$ make test\r\nFAILED\r\n')],
      ['lone CR', Buffer.from('progress 10%\rprogress 100%\r')],
      ['NUL', Buffer.from('before\0after\0')],
      ['astral', Buffer.from('deploy ✅ 🚀 𝔘𝔫𝔦𝔠𝔬𝔡𝔢\n')],
      [
        'invalid UTF-8',
        Uint8Array.from([0x66, 0x6f, 0x80, 0xff, 0xc3, 0x28, 0x0a, 0xed, 0xa0, 0x80]),
      ],
      ['trailing whitespace', Buffer.from('value = 5433   \n\n\t ')],
      ['NFD', Buffer.from('Cafe\u0301 ve s\u0327ifre\n')],
    ];
    for (const [name, bytes] of payloads) {
      it(`${name}: exact bytes back, payload_sha256 over the original bytes`, async () => {
        const cf = await open();
        const r = await cf.fold({ stepId: 7, summary: `payload ${name}`, content: bytes });
        expect(r.payload_sha256).toBe(sha256Hex(bytes));
        const back = await cf.hydrateBytes(7);
        expect(Buffer.compare(Buffer.from(back), Buffer.from(bytes))).toBe(0);
        await cf.close();
        // And from a fresh process view, after compaction.
        const again = await reopen(cf);
        expect(Buffer.from(await again.hydrateBytes(7)).equals(Buffer.from(bytes))).toBe(true);
        const h = await again.hydrate(7);
        expect(h.payload_sha256).toBe(sha256Hex(bytes));
        expect((await again.validate()).ok).toBe(true);
        await again.close();
      });
    }

    it('stores non-UTF-8 payloads base64-encoded with an explicit encoding field', async () => {
      const cf = await open();
      await cf.fold({ stepId: 1, summary: 'bin', content: Uint8Array.from([0xff, 0xfe, 0x00]) });
      const node = JSON.parse((await last.readNode(1))!.toString('utf8'));
      expect(node.raw_content_encoding).toBe('base64');
      expect(Buffer.from(node.raw_content, 'base64')).toEqual(Buffer.from([0xff, 0xfe, 0x00]));
      expect((await cf.hydrate(1)).encoding).toBe('base64');
      await cf.close();
    });

    it('an empty payload is the summary: stored as raw_content, as the reference stores it', async () => {
      const cf = await open({ redact: false });
      await cf.fold({ stepId: 1, summary: 'PostgreSQL on port 5433' });
      await cf.fold({ stepId: 2, summary: 'empty string payload', content: '' });
      for (const [step, summary] of [
        [1, 'PostgreSQL on port 5433'],
        [2, 'empty string payload'],
      ] as const) {
        const node = JSON.parse((await last.readNode(step))!.toString('utf8'));
        expect(node.raw_content).toBe(summary);
        expect(node.payload_sha256).toBe(sha256Hex(summary));
        expect((await cf.hydrate(step)).content).toBe(summary);
      }
      await cf.close();
      // A node an earlier version wrote with raw_content '' (hashes unchanged) reads the same.
      const node = JSON.parse((await last.readNode(1))!.toString('utf8'));
      node.raw_content = '';
      const { artifact_sha256: _, ...rest } = node;
      const artifact = artifactHash(rest);
      await last.writeNode(1, JSON.stringify({ ...rest, artifact_sha256: artifact }));
      await last.editEntry(1, (e) => {
        e.artifact_sha256 = artifact;
      });
      const again = await reopen(cf);
      expect((await again.hydrate(1)).content).toBe('PostgreSQL on port 5433');
      expect((await again.validate()).ok).toBe(true);
      await again.close();
    });

    it('property: any bytes survive the round trip', async () => {
      const cf = await open();
      let step = 0;
      await fc.assert(
        fc.asyncProperty(fc.uint8Array({ maxLength: 300 }), async (bytes) => {
          const s = step++;
          await cf.fold({ stepId: s, summary: `p${s}`, content: bytes });
          const back = Buffer.from(await cf.hydrateBytes(s));
          // An empty payload is replaced by the summary, as the reference does.
          const expected = bytes.length === 0 ? Buffer.from(`p${s}`) : Buffer.from(bytes);
          expect(back.equals(expected)).toBe(true);
        }),
        { numRuns: 60 },
      );
      expect((await cf.validate()).ok).toBe(true);
      await cf.close();
    });

    it('rejects a string payload with a lone surrogate, pointing to bytes', async () => {
      const cf = await open();
      await expect(cf.fold({ stepId: 1, summary: 's', content: 'a\uD800b' })).rejects.toMatchObject(
        {
          code: 'USAGE',
        },
      );
      expect(await last.readNode(1)).toBeNull();
    });
  });

  describe('fold semantics', () => {
    it('re-folding the same payload is a no-op; a different payload is a StepConflictError', async () => {
      const cf = await open();
      const a = await cf.fold({ stepId: 5, summary: 's', content: 'x' });
      const b = await cf.fold({ stepId: 5, summary: 's', content: 'x' });
      expect(b.already_folded).toBe(true);
      expect(b.artifact_sha256).toBe(a.artifact_sha256);
      // The error names the stored node where it is (a path, or a database address), not the
      // index's file_path relative to the store's parent (`.contextfold/cold_nodes/…`).
      await expect(cf.fold({ stepId: 5, summary: 's', content: 'y' })).rejects.toMatchObject({
        code: 'STEP_CONFLICT',
        details: { stepId: 5, path: cf.backend.nodePath(5) },
      });
      if (backend === 'local')
        expect(cf.backend.nodePath(5)).toBe(join(cf.dir, 'cold_nodes', 'step_000005.json'));
      await cf.close();
    });

    it('the same payload with other terms is a conflict; a summary that adds no term is a no-op (docs/library.md)', async () => {
      const cf = await open();
      await cf.fold({ stepId: 5, summary: 'a b', content: 'hello world' });
      const same = await cf.fold({ stepId: 5, summary: 'c d', content: 'hello world' });
      expect(same.already_folded).toBe(true);
      expect((await cf.entry(5))?.summary).toBe('a b');
      for (const other of [{ summary: 'PostgreSQL config' }, { summary: 'a b', files: ['x.ts'] }]) {
        await expect(
          cf.fold({ stepId: 5, content: 'hello world', ...other }),
        ).rejects.toMatchObject({ code: 'STEP_CONFLICT' });
      }
      await cf.close();
    });

    it('a batch holding one step twice with other terms is a conflict, as two folds are', async () => {
      // Before, the second input was answered already_folded: true with a projection hash and
      // terms no stored node has (the first input's node was what the store kept).
      const cf = await open();
      await expect(
        cf.foldMany([
          { stepId: 1, summary: 'a b', content: 'hello world' },
          { stepId: 1, summary: 'PostgreSQL config', content: 'hello world' },
        ]),
      ).rejects.toMatchObject({ code: 'STEP_CONFLICT', details: { stepId: 1 } });
      expect(await last.readNode(1)).toBeNull();
      const [a, b] = await cf.foldMany([
        { stepId: 2, summary: 'a b', content: 'hello world' },
        { stepId: 2, summary: 'c d', content: 'hello world' },
      ]);
      expect(b!.already_folded).toBe(true);
      expect(b!.projection_sha256).toBe(a!.projection_sha256);
      await cf.close();
    });

    it('entry and recall refuse arguments they cannot answer (a string step, a negative limit)', async () => {
      // Before, entry('1') returned step 1's entry where hydrate('1') is a usage error, and
      // recall took a limit of -1 or 'a' as no limit.
      const cf = await open();
      await cf.fold({ stepId: 1, summary: 'PostgreSQL port', content: 'port 5433' });
      for (const step of ['1', -1, 1.5]) {
        await expect(cf.entry(step as number)).rejects.toMatchObject({ code: 'USAGE' });
      }
      for (const limit of [-1, 1.5, 'a']) {
        await expect(cf.recall('port', { limit: limit as number })).rejects.toMatchObject({
          code: 'USAGE',
        });
      }
      expect((await cf.recall('port', { limit: 0 })).candidates).toEqual([]);
      expect((await cf.entry(1))?.step_id).toBe(1);
      expect(await cf.entry(2)).toBeUndefined();
      await cf.close();
    });

    it("close refuses a compact that is not true or false (compact: 'no' compacted)", async () => {
      const cf = await open();
      await cf.fold({ stepId: 1, summary: 'one', content: 'first' });
      await expect(cf.close({ compact: 'no' as never })).rejects.toMatchObject({ code: 'USAGE' });
      await cf.close({ compact: false });
    });

    it('close waits for a batch, a scan and a page-in in flight (it closed the store under them)', async () => {
      const cf = await open({ redact: false });
      // Two rounds (FOLD_ROUND is 1,024): close() is called once the first has committed.
      const inputs = Array.from({ length: 1100 }, (_, i) => ({
        stepId: i,
        summary: `turn ${i}`,
        content: `port ${i} of the service`,
      }));
      let closing: Promise<void> | null = null;
      const batch = cf.foldMany(inputs, (done, _total, phase) => {
        if (phase === 'writing' && done > 0) closing ??= cf.close();
      });
      expect(await batch).toHaveLength(1100);
      await closing;
      const again = await reopen(cf);
      const scan = again.scan('port 42');
      const page = again.pageIn('port 42');
      await again.close();
      expect((await scan).selected.length).toBeGreaterThan(0);
      expect((await page).pages.length).toBeGreaterThan(0);
      const third = await reopen(again);
      expect((await third.status()).nodes).toBe(1100);
      await expect(
        third.fold({ stepId: 5000, summary: 'x' }).then(() => third.close()),
      ).resolves.toBeUndefined();
    });

    it('refuses an operation started while close() waits (a late fold was written)', async () => {
      const cf = await open({ redact: false });
      const inputs = Array.from({ length: 1100 }, (_, i) => ({
        stepId: i,
        summary: `turn ${i}`,
        content: `port ${i} of the service`,
      }));
      const batch = cf.foldMany(inputs);
      const closing = cf.close();
      const closed = { code: 'USAGE', message: expect.stringMatching(/engine is closed/) };
      await expect(cf.fold({ stepId: 5000, summary: 'late' })).rejects.toMatchObject(closed);
      await expect(cf.scan('port 42')).rejects.toMatchObject(closed);
      await expect(cf.status()).rejects.toMatchObject(closed);
      await expect(cf.pageIn('port 42', { mode: 'reference' })).rejects.toMatchObject(closed);
      expect(await batch).toHaveLength(1100);
      await closing;
      const again = await reopen(cf);
      expect(await again.entry(5000)).toBeUndefined();
      expect((await again.status()).nodes).toBe(1100);
      await again.close();
    });

    it('rejects bad step ids with a usage error and writes nothing', async () => {
      const cf = await open();
      const before = await last.fingerprint();
      for (const stepId of [-1, 1.5, Number.NaN]) {
        await expect(cf.fold({ stepId, summary: 's' })).rejects.toMatchObject({ code: 'USAGE' });
      }
      expect(await last.fingerprint()).toBe(before);
      if (backend === 'local') expect(existsSync(cf.dir)).toBe(false);
      await cf.close();
    });

    it('validates a whole batch before writing anything', async () => {
      const cf = await open();
      await expect(
        cf.foldMany([
          { stepId: 1, summary: 'ok', content: 'fine' },
          { stepId: 2, summary: 'bad', content: '\uDC00' },
        ]),
      ).rejects.toMatchObject({ code: 'USAGE' });
      expect(await last.readNode(1)).toBeNull();
      await cf.close();
    });

    it('deterministic projection across runs with different clocks (CONF-11)', async () => {
      const a = await open({ clock: () => new Date('2026-01-01T00:00:00Z') });
      const b = await open({ clock: () => new Date('2030-06-06T12:00:00Z') });
      const input = { stepId: 42, summary: 'Port 5433', content: '$ psql -p 5433\nok' };
      const ra = await a.fold(input);
      const rb = await b.fold(input);
      expect(ra.projection_sha256).toBe(rb.projection_sha256);
      expect(ra.payload_sha256).toBe(rb.payload_sha256);
      expect(ra.artifact_sha256).not.toBe(rb.artifact_sha256);
      expect(ra.folded_at).toBe('2026-01-01T00:00:00Z');
      await a.close();
      await b.close();
    });

    it('a policy change alters projection_sha256 but not payload_sha256', async () => {
      const a = await open();
      const b = await open({ policy: { ...DEFAULT_POLICY, max_rehydration_tokens_per_call: 100 } });
      const input = { stepId: 1, summary: 's', content: 'same bytes' };
      const ra = await a.fold(input);
      const rb = await b.fold(input);
      expect(ra.payload_sha256).toBe(rb.payload_sha256);
      expect(ra.projection_sha256).not.toBe(rb.projection_sha256);
      await a.close();
      await b.close();
    });
  });

  describe('bounded hydration (CONF-06)', () => {
    const lines = Array.from({ length: 400 }, (_, i) => `line ${i}: ${'x'.repeat(20 + (i % 13))}`);
    const big = `${lines.join('\n')}\n`;

    for (const tokenizer of ['reference', 'o200k'] as const) {
      it(`${tokenizer}: chunks at line boundaries within the cap, concatenating to the payload`, async () => {
        const policy = { ...DEFAULT_POLICY, max_rehydration_tokens_per_call: 300 };
        const cf = await open({ tokenizer, policy });
        await cf.fold({ stepId: 3, summary: 'big log', content: big });
        const first = await cf.hydrate(3);
        expect(first.truncated).toBe(true);
        expect(first.chunks).toBeGreaterThan(1);
        const parts = [first.content];
        for (let k = 1; k < first.chunks; k++) {
          const c = await cf.hydrate(3, { chunk: k });
          expect(c.chunk).toBe(k);
          expect(c.tokens).toBeLessThanOrEqual(300);
          expect(c.payload_sha256).toBe(sha256Hex(big));
          parts.push(c.content);
        }
        expect(first.tokens).toBeLessThanOrEqual(300);
        expect(first.tokens).toBe(cf.tokenizer.count(first.content));
        for (const p of parts.slice(0, -1)) expect(p.endsWith('\n')).toBe(true);
        expect(parts.join('')).toBe(big);
        await expect(cf.hydrate(3, { chunk: first.chunks })).rejects.toMatchObject({
          code: 'USAGE',
        });
        await cf.close();
      });
    }

    it('a maxTokens or window hydrate cannot serve as asked is a usage error, not an empty page', async () => {
      // Before, NaN or a string cap gave a verified result cut to one token, and a window of a
      // reversed range or without max_tokens a verified, empty result.
      const cf = await open();
      await cf.fold({ stepId: 3, summary: 'big log', content: big });
      const bad = [
        { maxTokens: Number.NaN },
        { maxTokens: -5 },
        { maxTokens: '10' as unknown as number },
        { window: { start_line: 5, end_line: 2, max_tokens: 100 } },
        { window: { start_line: 0, end_line: 10 } as never },
        { window: { start_line: 0, end_line: 10, max_tokens: Number.NaN } },
        { window: { start_line: -1, end_line: 3, max_tokens: 100 } },
        { window: { start_line: 0, end_line: 3, max_tokens: 100, tail_lines: 1.5 } },
      ];
      for (const options of bad) {
        await expect(cf.hydrate(3, options)).rejects.toMatchObject({ code: 'USAGE' });
      }
      expect((await cf.hydrate(3, { maxTokens: 0 })).tokens).toBeLessThanOrEqual(1);
      const w = await cf.hydrate(3, { window: { start_line: 2, end_line: 4, max_tokens: 100 } });
      expect(w.content).toBe(`${lines[2]}\n${lines[3]}\n`);
      await cf.close();
    });

    it('scan options: maxTokens bounds a reference page-in too; a bad liveFrom or lossy is refused', async () => {
      // Before, the reference scan ignored maxTokens (a 50-token bound paged ~3,000 tokens) and
      // took any liveFrom or lossy value without a word.
      const cf = await open();
      await cf.fold({ stepId: 3, summary: 'big log of line tokens', content: big });
      for (const mode of ['reference', 'ranked'] as const) {
        const r = await cf.pageIn('line tokens', { mode, maxTokens: 50 });
        expect(r.scan.selected.map((p) => p.step_id)).toEqual([3]);
        expect(r.tokens).toBeLessThanOrEqual(50);
        for (const options of [{ maxTokens: -1 }, { liveFrom: -1 }, { lossy: [1.5] }]) {
          await expect(cf.scan('line', { mode, ...options })).rejects.toMatchObject({
            code: 'USAGE',
          });
        }
      }
      await cf.close();
    });

    it('cuts a single line longer than the cap within the line', async () => {
      const policy = { ...DEFAULT_POLICY, max_rehydration_tokens_per_call: 10 };
      const cf = await open({ policy });
      const line = 'a'.repeat(200);
      await cf.fold({ stepId: 1, summary: 's', content: line });
      const h = await cf.hydrate(1);
      // The reference estimator counts max(1, codepoints // 4): 43 code points are 10 tokens.
      expect(h.chunks).toBe(5);
      expect(h.content).toBe('a'.repeat(43));
      expect((await cf.hydrate(1, { chunk: 4 })).content).toBe('a'.repeat(200 - 4 * 43));
      await cf.close();
    });

    it('a small payload is one untruncated chunk', async () => {
      const cf = await open();
      await cf.fold({ stepId: 1, summary: 's', content: 'short' });
      expect(await cf.hydrate(1)).toMatchObject({
        chunk: 0,
        chunks: 1,
        truncated: false,
        verified: true,
      });
      await cf.close();
    });
  });

  describe('failure modes (CONF-09/10/12)', () => {
    async function seeded() {
      const cf = await open();
      await foldTwoAndClose(cf);
      return reopen(cf);
    }

    it('unknown step → NodeNotFoundError', async () => {
      const cf = await seeded();
      await expect(cf.hydrate(99)).rejects.toMatchObject({
        name: 'NodeNotFoundError',
        code: 'NODE_NOT_FOUND',
      });
      await cf.close();
    });

    it('tampered payload (one byte) → IntegrityCheckError; never returned', async () => {
      const cf = await seeded();
      const p = last.nodePath(1);
      await last.editNode(1, (t) => t.replace('first payload', 'first pAyload'));
      await expect(cf.hydrate(1)).rejects.toMatchObject({
        name: 'IntegrityCheckError',
        details: { path: p },
      });
      const v = await cf.validate();
      expect(v.ok).toBe(false);
      expect(v.problems).toEqual([
        expect.objectContaining({ kind: 'integrity', step_id: 1, path: p }),
      ]);
      expect((await cf.pageIn('first payload')).pages).toEqual([]);
      await cf.close();
    });

    it('content and artifact hash rewritten together are still caught by payload_sha256', async () => {
      const cf = await seeded();
      const node = JSON.parse((await last.readNode(1))!.toString('utf8'));
      node.raw_content = 'forged';
      const { artifactHash } = await import('../store/cold-node.js');
      node.artifact_sha256 = artifactHash(node);
      await last.writeNode(1, JSON.stringify(node));
      // The index still holds the old artifact hash, so rewrite that too (a thorough forger).
      await cf.compact();
      await last.editEntry(1, (e) => {
        e.artifact_sha256 = node.artifact_sha256;
      });
      const again = await reopen(cf);
      await expect(again.hydrate(1)).rejects.toThrow(/payload_sha256 does not match/);
      await cf.close();
      await again.close();
    });

    it('truncated node (scenario C) → IntegrityCheckError', async () => {
      const cf = await seeded();
      await last.writeNode(2, (await last.readNode(2))!.subarray(0, 40));
      await expect(cf.hydrate(2)).rejects.toMatchObject({ code: 'INTEGRITY_CHECK' });
      await cf.close();
    });

    it('missing node file (scenario B) → BrokenReferenceError with the path', async () => {
      const cf = await seeded();
      await last.deleteNode(2);
      await expect(cf.hydrate(2)).rejects.toMatchObject({
        name: 'BrokenReferenceError',
        details: { path: last.nodePath(2) },
      });
      const v = await cf.validate();
      expect(v.problems.map((p) => p.kind)).toEqual(['broken_reference']);
      await cf.close();
    });

    it('orphaned node (scenario A) → OrphanedNodeError, reported by validate, refused by fold', async () => {
      const cf = await seeded();
      const mine = last;
      const other = await open();
      await other.fold({ stepId: 3, summary: 'stray', content: 'orphan' });
      await mine.writeNode(3, (await last.readNode(3))!);
      await last.deleteNode(3);
      await expect(cf.hydrate(3)).rejects.toMatchObject({ name: 'OrphanedNodeError' });
      const v = await cf.validate();
      expect(v.problems).toEqual([expect.objectContaining({ kind: 'orphaned_node', step_id: 3 })]);
      await expect(
        cf.fold({ stepId: 3, summary: 'stray', content: 'orphan' }),
      ).rejects.toMatchObject({
        name: 'OrphanedNodeError',
      });
      await cf.close();
      await other.close();
    });
  });

  describe('path containment (CONF-12), whatever integrity_verification says', () => {
    // A file_path the entry (recall_index.json's record, the entries row) points elsewhere with.
    const attacks: [string, (dir: string) => string][] = [
      ['dot-dot', () => '.contextfold/cold_nodes/../../outside/step_000001.json'],
      ['absolute', (dir) => join(dir, 'cold_nodes', 'step_000001.json')],
      ['sibling prefix', () => '.contextfold/cold_nodes_evil/step_000001.json'],
      ['other step', () => '.contextfold/cold_nodes/step_000002.json'],
      ['backslash', () => '.contextfold\\cold_nodes\\step_000001.json'],
    ];
    for (const [name, path] of attacks) {
      it(`${name} file_path → PathContainmentError`, async () => {
        const policy = { ...DEFAULT_POLICY, integrity_verification: false };
        const cf = await open({ policy });
        await cf.foldMany([
          { stepId: 1, summary: 'one', content: 'a' },
          { stepId: 2, summary: 'two', content: 'b' },
        ]);
        await cf.compact();
        if (backend === 'local') {
          // Give the sibling directory real content so only containment can refuse it.
          mkdirSync(join(cf.dir, '..', '.contextfold', 'cold_nodes_evil'), { recursive: true });
          writeFileSync(
            join(cf.dir, 'cold_nodes_evil', 'step_000001.json'),
            readFileSync(join(cf.dir, 'cold_nodes', 'step_000001.json')),
          );
        }
        await last.editEntry(1, (e) => {
          e.file_path = path(backend === 'local' ? cf.dir : last.root);
        });
        // The engine that compacted reads the edit on local; a new one on either backend.
        const engines =
          backend === 'local' ? [cf, await reopen(cf, { policy })] : [await reopen(cf, { policy })];
        for (const e of engines) {
          await expect(e.hydrate(1)).rejects.toMatchObject({
            name: 'PathContainmentError',
            code: 'PATH_CONTAINMENT',
          });
          const v = await e.validate();
          expect(v.problems).toEqual([
            expect.objectContaining({ kind: 'path_containment', step_id: 1 }),
          ]);
        }
        for (const e of new Set([cf, ...engines])) await e.close({ compact: false });
      });
    }
  });

  describe('engines sharing a store', () => {
    it('another engine on the same store sees new folds without reopening', async () => {
      const a = await open();
      await a.fold({ stepId: 1, summary: 'alpha', content: 'PostgreSQL port 5433' });
      const b = await reopen(a, { retrieval: 'reference' });
      expect((await b.scan('postgresql port')).selected.map((s) => s.step_id)).toEqual([1]);
      await a.fold({ stepId: 2, summary: 'beta', content: 'PostgreSQL port 5434' });
      expect((await b.scan('postgresql port')).selected.map((s) => s.step_id)).toEqual([2]);
      await a.compact();
      await a.fold({ stepId: 3, summary: 'gamma', content: 'PostgreSQL port 5433' });
      expect((await b.scan('postgresql port')).selected.map((s) => s.step_id)).toEqual([3]);
      expect((await b.status()).nodes).toBe(3);
      await a.close();
      await b.close();
    });

    it("compact counts the store's nodes, also as the first call of a new engine", async () => {
      // A database store's mirror follows the change feed on reads: compact reported 0 nodes.
      const a = await open();
      await a.foldMany([
        { stepId: 1, summary: 'one', content: 'a' },
        { stepId: 2, summary: 'two', content: 'b' },
      ]);
      await a.close();
      const b = await reopen(a, { mustExist: true }); // as the CLI opens it
      expect(await b.compact()).toMatchObject({ nodes: 2 });
      await b.close();
    });

    it('evict marks the entry and records the eviction, seen by a fresh engine', async () => {
      const cf = await open();
      await cf.fold({ stepId: 1, summary: 'one', content: 'a' });
      const e = await cf.evict(1);
      expect(e.step_id).toBe(1);
      await expect(cf.evict(2)).rejects.toMatchObject({ code: 'NODE_NOT_FOUND' });
      await cf.close();
      if (backend === 'local') {
        // The reference layout: the eviction log and the evicted flag, written on compaction.
        const log = JSON.parse(readFileSync(join(cf.dir, 'eviction_log.json'), 'utf8'));
        expect(log.evicted).toEqual([{ step_id: 1, evicted_at: e.evicted_at }]);
        const idx = JSON.parse(readFileSync(join(cf.dir, 'recall_index.json'), 'utf8'));
        expect(idx.nodes['1'].evicted).toBe(true);
      }
      const again = await reopen(cf);
      expect((await again.entry(1))?.evicted).toBe(true);
      expect(again.backend.evictions()).toEqual([{ step_id: 1, evicted_at: e.evicted_at }]);
      expect((await again.status()).evicted).toBe(1);
      await again.close();
    });
  });

  describe('page-in (CONF-13)', () => {
    it('pages in verified content within the per-turn budget and reports refused pages', async () => {
      const policy = {
        ...DEFAULT_POLICY,
        max_rehydration_tokens_per_call: 50,
        max_rehydration_tokens_per_turn: 60,
      };
      const cf = await open({ policy });
      await cf.foldMany([
        { stepId: 10, summary: 'redis cache ttl', content: `redis ttl 60\n${'pad '.repeat(100)}` },
        {
          stepId: 20,
          summary: 'nginx worker count',
          content: `nginx workers 4\n${'pad '.repeat(100)}`,
        },
      ]);
      const r = await cf.pageIn('redis ttl and nginx workers?');
      // Equal gain: the later step is picked first, the second no longer fits the turn budget.
      expect(r.pages.map((p) => p.step_id)).toEqual([20]);
      expect(r.pages[0]!.truncated).toBe(true);
      expect(r.tokens).toBeLessThanOrEqual(50);
      expect(r.scan.budget_dropped.map((p) => p.step_id)).toEqual([10]);
      await last.editNode(20, (t) => t.replace('workers 4', 'workers 9'));
      const again = await cf.pageIn('redis ttl and nginx workers?');
      // The refused page is reported and never replaced by another node.
      expect(again.pages).toEqual([]);
      expect(again.failures).toEqual([
        expect.objectContaining({ step_id: 20, error: 'IntegrityCheckError' }),
      ]);
      await cf.close();
    });
  });
});

// State only a store directory can hold: a database has no journal file, no temp files, no
// symlinks and no recall_index.json to corrupt (its writes are transactions). The conformance
// run on PostgreSQL lists the same cases (src/conformance/pg-mirror-subject.test.ts).
describe('local store only', () => {
  const tmp = tempDir();
  afterAll(() => tmp.cleanup());
  let n = 0;
  const freshDir = () => join(tmp.dir, `s${n++}`, '.contextfold');
  async function open(opts: Opts = {}) {
    return ContextFold.open({ dir: freshDir(), tokenizer: 'reference', ...opts });
  }
  async function seeded() {
    const cf = await open();
    await foldTwoAndClose(cf);
    return ContextFold.open({ dir: cf.dir, tokenizer: 'reference' });
  }

  it('foldMany reports the preparing pass (redaction, before any write), then the writing pass', async () => {
    // Before, nothing was heard while a large batch was redacted: most of an import's time.
    const cf = await open();
    const inputs = Array.from({ length: 1500 }, (_, i) => ({
      stepId: i,
      summary: `turn ${i}`,
      content: `line ${i}`,
    }));
    const calls: [number, number, string][] = [];
    const nodes = join(cf.dir, 'cold_nodes');
    const writtenWhenPrepared: boolean[] = [];
    await cf.foldMany(inputs, (done, total, phase) => {
      calls.push([done, total, phase]);
      if (phase === 'preparing' && done === total) {
        writtenWhenPrepared.push(existsSync(nodes) && readdirSync(nodes).length > 0);
      }
    });
    const phases = calls.map((c) => c[2]);
    expect(phases.indexOf('writing')).toBeGreaterThan(phases.lastIndexOf('preparing'));
    expect(calls.filter((c) => c[2] === 'preparing').map((c) => c[0])).toEqual([
      256, 512, 768, 1024, 1280, 1500,
    ]);
    expect(calls.filter((c) => c[2] === 'writing').map((c) => c[0])).toEqual([1024, 1500]);
    expect(writtenWhenPrepared).toEqual([false]);
    await cf.close();
  });

  it('unparsable index → every read refuses, validate reports the path', async () => {
    const cf = await seeded();
    const ip = join(cf.dir, 'recall_index.json');
    writeFileSync(ip, readFileSync(ip, 'utf8').slice(0, 100));
    const again = await ContextFold.open({ dir: cf.dir, tokenizer: 'reference' });
    await expect(again.scan('first')).rejects.toMatchObject({
      code: 'INTEGRITY_CHECK',
      details: { path: ip },
    });
    const v = await again.validate();
    expect(v.problems[0]).toMatchObject({ kind: 'index', path: ip });
  });

  it.each([
    ['ipcf_version', '1.2'],
    ['projection_version', 'ipcf-projection-v3'],
  ])(
    'an index of another %s (%s) is refused, never folded into or rewritten as 1.1',
    async (key, value) => {
      // Before, the store was read, validated ok and folded into, and close() rewrote its header
      // as IPCF 1.1 / ipcf-projection-v2: a newer engine's store silently downgraded.
      const cf = await seeded();
      const ip = join(cf.dir, 'recall_index.json');
      const header = JSON.parse(readFileSync(ip, 'utf8'));
      writeFileSync(ip, JSON.stringify({ ...header, [key]: value }));
      const written = readFileSync(ip, 'utf8');
      const again = await ContextFold.open({ dir: cf.dir, tokenizer: 'reference' });
      await expect(again.scan('first')).rejects.toMatchObject({
        code: 'INTEGRITY_CHECK',
        message: expect.stringContaining(`written for IPCF`),
        details: { path: ip },
      });
      await expect(again.fold({ stepId: 3, summary: 'three', content: 'c' })).rejects.toMatchObject(
        {
          code: 'INTEGRITY_CHECK',
        },
      );
      const v = await again.validate();
      expect(v.ok).toBe(false);
      expect(v.problems[0]).toMatchObject({ kind: 'index', path: ip });
      expect(v.problems[0]!.message).toContain(value);
      await again.close();
      expect(readFileSync(ip, 'utf8')).toBe(written);
      expect(existsSync(join(cf.dir, 'cold_nodes', 'step_000003.json'))).toBe(false);
    },
  );

  it('a record kind that is no plain name is refused: nothing is read or written outside the store', async () => {
    // Before, appendRecords('../x', …) appended to x.jsonl beside the store directory (and its
    // lock file), and readRecords('../../etc/passwd') read <dir>/../../etc/passwd.jsonl.
    const cf = await open();
    await cf.fold({ stepId: 1, summary: 'one', content: 'a' });
    const parent = join(cf.dir, '..');
    const before = readdirSync(parent);
    for (const kind of ['../x', 'a/b', '', 'Events', '.hidden']) {
      await expect(cf.appendRecords(kind, 'line\n')).rejects.toMatchObject({ code: 'USAGE' });
      await expect(cf.readRecords(kind)).rejects.toMatchObject({ code: 'USAGE' });
    }
    expect(readdirSync(parent)).toEqual(before);
    await cf.appendRecords('events', 'line\n');
    expect((await cf.readRecords('events')).text).toBe('line\n');
    await cf.close();
  });

  it('evicting a step of a store that does not exist yet creates nothing', async () => {
    // Before, evict took the write lock first, which made the directory, write.lock, cold_nodes
    // and a derived index, and only then said NODE_NOT_FOUND.
    const dir = freshDir();
    const cf = await ContextFold.open({ dir, tokenizer: 'reference' });
    await expect(cf.evict(1)).rejects.toMatchObject({ code: 'NODE_NOT_FOUND' });
    await expect(cf.evict(-1)).rejects.toMatchObject({ code: 'USAGE' });
    await cf.close();
    expect(existsSync(dir)).toBe(false);
  });

  it('a stray temp file in cold_nodes is reported', async () => {
    const cf = await seeded();
    writeFileSync(join(cf.dir, 'cold_nodes', '.step_000009.json.tmp-1-1'), '{');
    const v = await cf.validate();
    expect(v.problems).toEqual([
      expect.objectContaining({ kind: 'integrity', message: expect.stringMatching(/temp file/) }),
    ]);
  });

  it('a copy of a node under a non-canonical name (step_0000001.json) is reported', async () => {
    // Before, the name parsed as step 1, which is indexed, so validate said nothing about a
    // step_*.json file no index entry names (the reference reports every such file).
    const cf = await seeded();
    const copy = join(cf.dir, 'cold_nodes', 'step_0000001.json');
    copyFileSync(join(cf.dir, 'cold_nodes', 'step_000001.json'), copy);
    const v = await cf.validate();
    expect(v.ok).toBe(false);
    expect(v.problems).toEqual([
      expect.objectContaining({
        kind: 'integrity',
        path: copy,
        message: expect.stringMatching(/unexpected entry/),
      }),
    ]);
  });

  it('a recall_index.json rewritten without the open journal folds refuses the journal', async () => {
    // Before, the journal was taken for a compaction's leftover and removed by the next fold:
    // steps 1 and 2, committed, left the index without a word (the reference engine rewrites
    // recall_index.json from its own read, and takes no lock).
    const cf = await open();
    await cf.fold({ stepId: 1, summary: 'one', content: 'first payload' });
    await cf.fold({ stepId: 2, summary: 'two', content: 'second payload' });
    writeFileSync(
      join(cf.dir, 'recall_index.json'),
      JSON.stringify({ ipcf_version: '1.1', projection_version: 'ipcf-projection-v2', nodes: {} }),
    );
    await expect(cf.fold({ stepId: 3, summary: 'three', content: 'c' })).rejects.toMatchObject({
      code: 'INTEGRITY_CHECK',
      message: expect.stringMatching(/lacks its records for step\(s\) 1, 2/),
    });
    const v = await cf.validate();
    expect(v.problems.map((p) => p.kind)).toContain('journal');
  });

  it('a symlinked node file pointing out of the store → PathContainmentError', async () => {
    const cf = await open();
    await cf.fold({ stepId: 1, summary: 'one', content: 'a' });
    const p = join(cf.dir, 'cold_nodes', 'step_000001.json');
    const outside = join(cf.dir, '..', 'outside.json');
    renameSync(p, outside);
    symlinkSync(outside, p);
    await expect(cf.hydrate(1)).rejects.toMatchObject({ name: 'PathContainmentError' });
  });

  it('a symlinked cold_nodes directory → PathContainmentError', async () => {
    const cf = await open();
    await cf.fold({ stepId: 1, summary: 'one', content: 'a' });
    const elsewhere = join(cf.dir, '..', 'elsewhere');
    renameSync(join(cf.dir, 'cold_nodes'), elsewhere);
    symlinkSync(elsewhere, join(cf.dir, 'cold_nodes'));
    await expect(cf.hydrate(1)).rejects.toMatchObject({ name: 'PathContainmentError' });
  });

  describe('journal and compaction', () => {
    it('a fold appends to the journal; compaction leaves exactly the reference layout', async () => {
      const cf = await open();
      await cf.fold({ stepId: 1, summary: 'one', content: 'a' });
      expect(existsSync(join(cf.dir, 'recall_index.journal'))).toBe(true);
      expect((await cf.status()).journal_entries).toBe(1);
      await cf.close();
      // The reference files, plus the derived index and the lock file (never read by the reference).
      expect(readdirSync(cf.dir).sort()).toEqual([
        'cold_nodes',
        expect.stringMatching(/^index-1-[0-9a-f]{8}\.sqlite$/),
        'recall_index.json',
        'write.lock',
      ]);
    });

    it('compacts automatically past the bound, so the journal stays bounded', async () => {
      const cf = await open({ journalCompactThreshold: 10 });
      for (let i = 0; i < 25; i++) await cf.fold({ stepId: i, summary: `s${i}`, content: `c${i}` });
      expect((await cf.status()).journal_entries).toBeLessThanOrEqual(25);
      expect(existsSync(join(cf.dir, 'recall_index.json'))).toBe(true);
      const again = await ContextFold.open({ dir: cf.dir, tokenizer: 'reference' });
      expect((await again.status()).nodes).toBe(25);
      expect((await again.validate()).ok).toBe(true);
    });

    it('a torn journal tail (an append that never returned) moves into quarantine with a warning; the store goes on', async () => {
      const cf = await open();
      await cf.fold({ stepId: 1, summary: 'one', content: 'a' });
      const jp = join(cf.dir, 'recall_index.journal');
      const whole = readFileSync(jp);
      const torn = '{"record":{"op":"fold","entry":{"step_id":2';
      appendFileSync(jp, torn);
      const warnings: IndexWarning[] = [];
      const again = await ContextFold.open({
        dir: cf.dir,
        tokenizer: 'reference',
        onWarning: (w) => warnings.push(w),
      });
      expect((await again.recall('one')).candidates.map((c) => c.step_id)).toEqual([1]);
      const to = join(cf.dir, 'quarantine', `recall_index.journal.torn-at-${whole.length}`);
      expect(warnings).toEqual([
        {
          code: 'JOURNAL_TAIL_QUARANTINED',
          message: `the journal ended in a torn record (a fold interrupted before it committed): its ${torn.length} bytes moved to ${to}`,
          path: jp,
        },
      ]);
      expect(readFileSync(to, 'utf8')).toBe(torn);
      expect(readFileSync(jp)).toEqual(whole);
      await again.fold({ stepId: 3, summary: 's', content: 'c' });
      expect(await again.validate()).toMatchObject({ ok: true, problems: [] });
      const third = await ContextFold.open({ dir: cf.dir, tokenizer: 'reference' });
      expect((await third.entries()).map((e) => e.step_id)).toEqual([1, 3]);
    });

    it('a torn tail seen read-only is refused with its path, the file left as it is', async () => {
      const cf = await open();
      await cf.fold({ stepId: 1, summary: 'one', content: 'a' });
      const jp = join(cf.dir, 'recall_index.journal');
      appendFileSync(jp, '{"record":{"op":"fo');
      const before = readFileSync(jp);
      const ro = await ContextFold.open({ dir: cf.dir, tokenizer: 'reference', readOnly: true });
      await expect(ro.recall('one')).rejects.toMatchObject({
        code: 'INTEGRITY_CHECK',
        details: { path: jp },
      });
      expect((await ro.validate()).problems[0]).toMatchObject({ kind: 'journal', path: jp });
      expect(readFileSync(jp)).toEqual(before);
      expect(existsSync(join(cf.dir, 'quarantine'))).toBe(false);
    });

    it('a journal torn inside its base record is removed whole; the next fold starts a new one', async () => {
      const cf = await open();
      await cf.fold({ stepId: 1, summary: 'one', content: 'a' });
      await cf.compact();
      const jp = join(cf.dir, 'recall_index.journal');
      expect(existsSync(jp)).toBe(false);
      writeFileSync(jp, '{"record":{"op":"ba');
      const again = await ContextFold.open({ dir: cf.dir, tokenizer: 'reference' });
      await again.fold({ stepId: 2, summary: 'two', content: 'b' });
      expect(
        readFileSync(join(cf.dir, 'quarantine', 'recall_index.journal.torn-at-0'), 'utf8'),
      ).toBe('{"record":{"op":"ba');
      expect(readFileSync(jp, 'utf8')).toMatch(/^\{"record":\{"created_at":"[^"]+","op":"base"/);
      const third = await ContextFold.open({ dir: cf.dir, tokenizer: 'reference' });
      expect((await third.entries()).map((e) => e.step_id)).toEqual([1, 2]);
      expect((await third.validate()).ok).toBe(true);
    });

    it('a corrupt line before a torn tail still refuses every writer', async () => {
      const cf = await open();
      await cf.fold({ stepId: 1, summary: 'one', content: 'a' });
      const jp = join(cf.dir, 'recall_index.journal');
      writeFileSync(
        jp,
        `${readFileSync(jp, 'utf8').replace('"summary":"one"', '"summary":"uno"')}{"rec`,
      );
      const again = await ContextFold.open({ dir: cf.dir, tokenizer: 'reference' });
      await expect(again.fold({ stepId: 3, summary: 's', content: 'c' })).rejects.toMatchObject({
        code: 'INTEGRITY_CHECK',
        details: { path: jp },
      });
      expect((await again.validate()).problems[0]).toMatchObject({
        kind: 'journal',
        message: expect.stringMatching(/checksum/),
      });
    });

    it('a journal line with a bad checksum is reported', async () => {
      const cf = await open();
      await cf.fold({ stepId: 1, summary: 'one', content: 'a' });
      const jp = join(cf.dir, 'recall_index.journal');
      writeFileSync(jp, readFileSync(jp, 'utf8').replace('"summary":"one"', '"summary":"uno"'));
      const again = await ContextFold.open({ dir: cf.dir, tokenizer: 'reference' });
      expect((await again.validate()).problems[0]).toMatchObject({
        kind: 'journal',
        message: expect.stringMatching(/checksum/),
      });
    });

    it('a journal left behind by a compaction that crashed before removing it is recognised as stale', async () => {
      const cf = await open();
      await cf.foldMany([
        { stepId: 1, summary: 'one', content: 'a' },
        { stepId: 2, summary: 'two', content: 'b' },
      ]);
      const jp = join(cf.dir, 'recall_index.journal');
      const journal = readFileSync(jp);
      await cf.compact();
      writeFileSync(jp, journal); // the crash: snapshot renamed, journal not yet removed
      const again = await ContextFold.open({ dir: cf.dir, tokenizer: 'reference' });
      expect((await again.validate()).ok).toBe(true);
      expect((await again.status()).nodes).toBe(2);
      await again.fold({ stepId: 3, summary: 'three', content: 'c' });
      await again.close();
      const third = await ContextFold.open({ dir: cf.dir, tokenizer: 'reference' });
      expect((await third.entries()).map((e) => e.step_id)).toEqual([1, 2, 3]);
    });
  });
});
