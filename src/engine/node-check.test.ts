import { describe, expect, it } from 'vitest';
import { sha256Hex } from '../protocol/canonical-json.js';
import { artifactHash } from '../store/cold-node.js';
import { type TestStore, testStore } from '../test-utils/backend-store.js';
import { BACKENDS, type BackendName } from '../test-utils/pg.js';
import { ContextFold } from './context-fold.js';

// On each backend: a node's bytes edited behind the engine's back are its file, or its row.
describe.each(BACKENDS)('%s', (backend: BackendName) => {
  let last: TestStore;
  async function storeWith(
    steps: number[],
    options: { redact?: boolean } = {},
  ): Promise<ContextFold> {
    last = testStore(backend, 'check');
    const cf = await ContextFold.open({
      store: last.where,
      tokenizer: 'reference',
      cacheDir: false,
      ...options,
    });
    await cf.foldMany(
      steps.map((s) => ({ stepId: s, summary: `step ${s}`, content: `body ${s}\n` })),
    );
    return cf;
  }
  const nodeFile = (_cf: ContextFold, step: number) => last.nodePath(step);
  const readNode = async (step: number) =>
    JSON.parse((await last.readNode(step))!.toString('utf8'));

  describe('checkNode: hydrate’s verdict, hash by hash', () => {
    it('a sound node is verified and every hash agrees across index, file and recomputation', async () => {
      const cf = await storeWith([3]);
      const c = await cf.checkNode(3);
      expect(c.verified).toBe(true);
      expect(c.problem).toBeNull();
      expect(c.path).toBe(nodeFile(cf, 3));
      expect(c.hashes.map((h) => h.name)).toEqual([
        'artifact_sha256',
        'payload_sha256',
        'projection_sha256',
      ]);
      for (const h of c.hashes) expect(h.ok).toBe(true);
      expect(c.hashes[1]!.recomputed).toBe(sha256Hex('body 3\n'));
      expect(c.node?.sanitized).toBe(true); // the engine redacts by default (the guard)
      expect(c.node?.summary).toBe('step 3');
      expect(c.node?.extra).toEqual({});
      await cf.close();
    });

    it('a tampered payload names the broken hash and the path, and agrees with hydrate', async () => {
      const cf = await storeWith([4]);
      const file = nodeFile(cf, 4);
      const node = await readNode(4);
      node.raw_content = 'body 4 (edited)\n';
      node.artifact_sha256 = artifactHash(node); // a careful forger fixes the artifact hash
      await last.writeNode(4, JSON.stringify(node));
      const c = await cf.checkNode(4);
      expect(c.verified).toBe(false);
      expect(c.problem?.code).toBe('INTEGRITY_CHECK');
      expect(c.problem?.path).toBe(file);
      const byName = Object.fromEntries(c.hashes.map((h) => [h.name, h]));
      expect(byName.artifact_sha256!.ok).toBe(false); // the file's artifact hash differs from the index
      expect(byName.payload_sha256!.ok).toBe(false);
      expect(byName.payload_sha256!.recomputed).toBe(sha256Hex('body 4 (edited)\n'));
      await expect(cf.hydrate(4)).rejects.toThrow(/payload_sha256|artifact_sha256/);
      await cf.close();
    });

    it('a missing file is a broken reference with no node fields; extra fields are reported', async () => {
      const cf = await storeWith([5, 6]);
      await last.deleteNode(5);
      const c = await cf.checkNode(5);
      expect(c.verified).toBe(false);
      expect(c.problem?.code).toBe('BROKEN_REFERENCE');
      expect(c.node).toBeNull();
      expect(c.hashes.every((h) => h.file === null && !h.ok)).toBe(true);
      // An unknown field (a guard's findings, say) is shown, and breaks the artifact hash if
      // added behind the engine's back.
      const node = await readNode(6);
      node.guard_findings = [{ rule: 'x' }];
      await last.writeNode(6, JSON.stringify(node));
      const d = await cf.checkNode(6);
      expect(d.node?.extra).toEqual({ guard_findings: [{ rule: 'x' }] });
      expect(d.verified).toBe(false);
      await expect(cf.checkNode(99)).rejects.toThrow(/not folded/);
      await cf.close();
    });
  });

  describe('entriesPage and validate counts', () => {
    it('pages in step order with the total', async () => {
      const cf = await storeWith([9, 2, 5, 7, 1]);
      const p = await cf.entriesPage({ offset: 1, limit: 2 });
      expect(p.total).toBe(5);
      expect(p.entries.map((e) => e.step_id)).toEqual([2, 5]);
      expect(
        (await cf.entriesPage({ offset: 4, limit: 10 })).entries.map((e) => e.step_id),
      ).toEqual([9]);
      await expect(cf.entriesPage({ offset: -1 })).rejects.toThrow(/non-negative/);
      await cf.close();
    });

    it('validate counts the verified nodes that say sanitized: true', async () => {
      // Written as the reference writes them (sanitized: false); one is then rewritten as a
      // redacting engine would have written it.
      const cf = await storeWith([1, 2], { redact: false });
      expect((await cf.validate()).sanitized).toBe(0);
      await cf.close(); // compacts: the entries are now in recall_index.json
      // A node written by a redacting engine: sanitized in the file, hashes consistent.
      const node = await readNode(2);
      node.sanitized = true;
      node.artifact_sha256 = artifactHash(node);
      await last.writeNode(2, JSON.stringify(node));
      await last.editEntry(2, (e) => {
        e.artifact_sha256 = node.artifact_sha256;
      });
      const again = await ContextFold.open({
        store: cf.dir,
        tokenizer: 'reference',
        cacheDir: false,
      });
      const v = await again.validate();
      expect(v).toMatchObject({ ok: true, checked: 2, sanitized: 1 });
      expect((await again.checkNode(2)).node?.sanitized).toBe(true);
      // Tampered behind the index's back, the node fails and is no longer counted.
      node.summary = 'edited';
      node.artifact_sha256 = artifactHash(node);
      await last.writeNode(2, JSON.stringify(node));
      expect(await again.validate()).toMatchObject({ ok: false, sanitized: 0 });
      await again.close({ compact: false });
    });
  });
});
