import { cpSync, readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, expect, it } from 'vitest';
import type { HydrationPolicy } from '../protocol/policy.js';
import { BACKENDS, PG_MISSING, PG_URL, storeFor } from '../test-utils/pg.js';
import { describeShared, HAS_SHARED, sharedPath } from '../test-utils/shared.js';
import { tempDir } from '../test-utils/temp-dir.js';
import { ContextFold } from './context-fold.js';

interface Turn {
  step_id: number;
  summary: string;
  raw_content: string;
}
interface VectorQuery {
  query: string;
  recall: { step_id: number; status: string; coverage: number; score: number }[];
  scan_selected: [number, string[]][];
}
interface ScanVectors {
  variants: Record<string, { policy: HydrationPolicy; queries: VectorQuery[] }>;
}

const readJsonl = (p: string): Turn[] =>
  readFileSync(p, 'utf8')
    .split('\n')
    .filter((l) => l.trim())
    .map((l) => JSON.parse(l) as Turn);

const tmp = tempDir();
afterAll(() => tmp.cleanup());

const suites: [string, string, string][] = [
  ['demo', 'demo_history.jsonl', 'scan_demo.json'],
  ['synth200', 'synth200.jsonl', 'scan_synth200.json'],
];

// The interop vectors pin retrieval exactly: they run on every backend (a matrix).
for (const backend of BACKENDS) {
  describeShared(`reference scan and recall vectors (${backend} store)`, () => {
    const storeOf = (dir: string) => {
      if (backend === 'postgres' && !PG_URL) throw new Error(`CI=true: ${PG_MISSING}`);
      return storeFor(backend, dir, 'vectors');
    };
    for (const [name, historyFile, vectorFile] of suites) {
      const history = HAS_SHARED ? readJsonl(sharedPath('vectors', historyFile)) : [];
      const vectors: ScanVectors = HAS_SHARED
        ? JSON.parse(readFileSync(sharedPath('vectors', vectorFile), 'utf8'))
        : { variants: {} };
      for (const [variant, { policy, queries }] of Object.entries(vectors.variants)) {
        it(`${name} / ${variant}: ${queries.length} queries, selections and candidates exact`, async () => {
          const cf = await ContextFold.open({
            store: storeOf(join(tmp.dir, `${backend}-${name}-${variant}`, '.contextfold')),
            policy,
            tokenizer: 'reference',
            retrieval: 'reference',
          });
          await cf.foldMany(
            history.map((t) => ({ stepId: t.step_id, summary: t.summary, content: t.raw_content })),
          );
          for (const q of queries) {
            const scan = await cf.scan(q.query);
            expect(
              scan.selected.map((p) => [p.step_id, p.matched_terms]),
              q.query,
            ).toEqual(q.scan_selected);
            const rec = await cf.recall(q.query);
            expect(
              rec.candidates.map(({ step_id, status, coverage, score }) => ({
                step_id,
                status,
                coverage,
                score,
              })),
              q.query,
            ).toEqual(q.recall);
          }
          await cf.close();
        });
      }
    }

    it('demo: the multi-intent scan selects 342, 137, 447 in that order', async () => {
      const cf = await ContextFold.open({
        retrieval: 'reference',
        store: storeOf(join(tmp.dir, `${backend}-multi`, '.contextfold')),
        tokenizer: 'reference',
      });
      await cf.foldMany(
        readJsonl(sharedPath('vectors', 'demo_history.jsonl')).map((t) => ({
          stepId: t.step_id,
          summary: t.summary,
          content: t.raw_content,
        })),
      );
      const scan = await cf.scan(
        'What port are we using for PostgreSQL, and which migration applied the billing table?',
      );
      expect(scan.selected.map((p) => p.step_id)).toEqual([342, 137, 447]);
      await cf.close();
    });
  });
}

describeShared('the reference-written store', () => {
  it('validates and hydrates every node verbatim', async () => {
    const root = join(tmp.dir, 'refstore');
    cpSync(sharedPath('vectors', 'reference-store'), root, { recursive: true });
    const dir = join(root, '.contextfold');
    const cf = await ContextFold.open({ dir, tokenizer: 'reference' });
    const v = await cf.validate();
    expect(v).toEqual({
      ok: true,
      checked: 8,
      sanitized: 0,
      problems: [],
      // A reference-written store has no derived index: built on this first read, and said.
      warnings: [expect.objectContaining({ code: 'INDEX_REBUILT' })],
    });
    for (const name of readdirSync(join(dir, 'cold_nodes'))) {
      const node = JSON.parse(readFileSync(join(dir, 'cold_nodes', name), 'utf8'));
      const h = await cf.hydrate(node.step_id);
      expect(h.content).toBe(node.raw_content);
      expect(h.payload_sha256).toBe(node.payload_sha256);
      expect(h.truncated).toBe(false);
    }
    expect((await cf.status()).evicted).toBe(1);
    await cf.close();
  });

  it('with redaction off and its clock, a node we fold is the reference node, artifact hash included', async () => {
    const refDir = sharedPath('vectors', 'reference-store', '.contextfold');
    for (const name of readdirSync(join(refDir, 'cold_nodes'))) {
      const ref = JSON.parse(readFileSync(join(refDir, 'cold_nodes', name), 'utf8'));
      const dir = join(tmp.dir, `same-${name}`, '.contextfold');
      const cf = await ContextFold.open({
        dir,
        tokenizer: 'reference',
        redact: false,
        clock: () => new Date(ref.folded_at),
      });
      const r = await cf.fold({
        stepId: ref.step_id,
        summary: ref.summary,
        content: ref.raw_content,
      });
      await cf.close();
      expect(r.artifact_sha256, name).toBe(ref.artifact_sha256);
      expect(JSON.parse(readFileSync(join(dir, 'cold_nodes', name), 'utf8')), name).toEqual(ref);
    }
  });

  it('a store we write has exactly the reference layout and field sets', async () => {
    const refDir = sharedPath('vectors', 'reference-store', '.contextfold');
    const dir = join(tmp.dir, 'ours', '.contextfold');
    const cf = await ContextFold.open({ dir, tokenizer: 'reference' });
    await cf.foldMany(
      readJsonl(sharedPath('vectors', 'demo_history.jsonl')).map((t) => ({
        stepId: t.step_id,
        summary: t.summary,
        content: t.raw_content,
      })),
    );
    await cf.hydrate(137);
    await cf.evict(137);
    await cf.close();
    // Beside the reference files: only the derived index and the lock file (never read by it).
    const derived = /^(?:index-\d+-[0-9a-f]{8}\.sqlite|write\.lock)$/;
    const listing = (d: string) =>
      readdirSync(d, { recursive: true })
        .map(String)
        .filter((n) => !derived.test(n))
        .sort();
    expect(listing(dir)).toEqual(listing(refDir));
    expect(
      readdirSync(dir)
        .filter((n) => derived.test(n))
        .sort(),
    ).toEqual([expect.stringMatching(/^index-1-[0-9a-f]{8}\.sqlite$/), 'write.lock']);
    const keys = (p: string) => Object.keys(JSON.parse(readFileSync(p, 'utf8'))).sort();
    for (const name of readdirSync(join(refDir, 'cold_nodes'))) {
      expect(keys(join(dir, 'cold_nodes', name))).toEqual(keys(join(refDir, 'cold_nodes', name)));
      const ours = JSON.parse(readFileSync(join(dir, 'cold_nodes', name), 'utf8'));
      const ref = JSON.parse(readFileSync(join(refDir, 'cold_nodes', name), 'utf8'));
      for (const k of [
        'payload_sha256',
        'projection_sha256',
        'identifiers',
        'normalized_content',
        'token_estimate',
      ]) {
        expect(ours[k], `${name} ${k}`).toEqual(ref[k]);
      }
    }
    const ourIndex = JSON.parse(readFileSync(join(dir, 'recall_index.json'), 'utf8'));
    const refIndex = JSON.parse(readFileSync(join(refDir, 'recall_index.json'), 'utf8'));
    expect(Object.keys(ourIndex).sort()).toEqual(Object.keys(refIndex).sort());
    expect(Object.keys(ourIndex.nodes).sort()).toEqual(Object.keys(refIndex.nodes).sort());
    for (const k of Object.keys(refIndex.nodes)) {
      expect(Object.keys(ourIndex.nodes[k]).sort()).toEqual(Object.keys(refIndex.nodes[k]).sort());
      expect(ourIndex.nodes[k].file_path).toBe(refIndex.nodes[k].file_path);
      expect(ourIndex.nodes[k].evicted).toBe(refIndex.nodes[k].evicted);
    }
    expect(keys(join(dir, 'eviction_log.json'))).toEqual(keys(join(refDir, 'eviction_log.json')));
  });
});
