import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { Ajv2020 } from 'ajv/dist/2020.js';
import ajvFormats from 'ajv-formats';
import { afterAll, describe, expect, it } from 'vitest';
import { ContextFold } from '../engine/context-fold.js';
import { itShared, sharedPath } from '../test-utils/shared.js';
import { tempDir } from '../test-utils/temp-dir.js';
import { DEFAULT_POLICY } from './policy.js';
import { checkEvictionLog, checkIndexEntry, checkPolicy, checkRecallIndex } from './schemas.js';

const ajv = new Ajv2020({ strict: true, allErrors: true });
ajvFormats.default(ajv);
const schema = (name: string) =>
  ajv.compile(JSON.parse(readFileSync(new URL(`../../schemas/${name}`, import.meta.url), 'utf8')));
const coldNode = schema('cold_node.schema.json');
const recallIndex = schema('recall_index.schema.json');
const policy = schema('hydration_policy.schema.json');

const tmp = tempDir();
afterAll(() => tmp.cleanup());

describe('what we write validates against our JSON Schemas', () => {
  it('cold nodes (text and base64 payloads), the recall index and the default policy', async () => {
    const cf = await ContextFold.open({
      dir: join(tmp.dir, '.contextfold'),
      tokenizer: 'reference',
    });
    await cf.foldMany([
      { stepId: 1, summary: 'PostgreSQL on 5433', content: '$ psql -p 5433\r\nok' },
      { stepId: 2, summary: 'binary', content: Uint8Array.from([0xff, 0x00, 0xfe]) },
      { stepId: 3, summary: 'explicit', content: 'x', files: ['a.py'], errors: ['KeyError'] },
    ]);
    await cf.evict(1);
    await cf.close();
    for (const name of readdirSync(join(cf.dir, 'cold_nodes'))) {
      const node = JSON.parse(readFileSync(join(cf.dir, 'cold_nodes', name), 'utf8'));
      expect(coldNode(node), `${name}: ${ajv.errorsText(coldNode.errors)}`).toBe(true);
    }
    const index = JSON.parse(readFileSync(join(cf.dir, 'recall_index.json'), 'utf8'));
    expect(recallIndex(index), ajv.errorsText(recallIndex.errors)).toBe(true);
    expect(checkRecallIndex(index)).toBeNull();
    for (const e of Object.values(index.nodes)) expect(checkIndexEntry(e)).toBeNull();
    const log = JSON.parse(readFileSync(join(cf.dir, 'eviction_log.json'), 'utf8'));
    expect(checkEvictionLog(log)).toBeNull();
    expect(policy(DEFAULT_POLICY)).toBe(true);
    expect(checkPolicy(DEFAULT_POLICY)).toBeNull();
  });

  itShared('the reference-written store validates against them too', () => {
    const dir = sharedPath('vectors', 'reference-store', '.contextfold');
    for (const name of readdirSync(join(dir, 'cold_nodes'))) {
      const node = JSON.parse(readFileSync(join(dir, 'cold_nodes', name), 'utf8'));
      expect(coldNode(node), name).toBe(true);
    }
    const index = JSON.parse(readFileSync(join(dir, 'recall_index.json'), 'utf8'));
    expect(recallIndex(index)).toBe(true);
  });
});

describe('the hand-written boundary checks agree with the schemas on bad input', () => {
  const entry = {
    step_id: 1,
    payload_sha256: 'a'.repeat(64),
    projection_sha256: 'b'.repeat(64),
    artifact_sha256: 'c'.repeat(64),
    file_path: '.contextfold/cold_nodes/step_000001.json',
    folded_at: '2026-01-01T00:00:00Z',
    evicted: false,
  };
  const index = (e: unknown) => ({
    ipcf_version: '1.1',
    projection_version: 'ipcf-projection-v2',
    nodes: { '1': e },
  });
  const bad: [string, unknown][] = [
    ['missing artifact hash', { ...entry, artifact_sha256: undefined }],
    ['upper-case hash', { ...entry, payload_sha256: 'A'.repeat(64) }],
    ['string step id', { ...entry, step_id: '1' }],
    ['negative step id', { ...entry, step_id: -1 }],
    ['evicted not boolean', { ...entry, evicted: 'no' }],
    ['identifiers not strings', { ...entry, identifiers: [1] }],
  ];
  it('accepts a minimal valid entry', () => {
    expect(checkIndexEntry(entry)).toBeNull();
    expect(recallIndex(index(entry))).toBe(true);
  });
  for (const [what, e] of bad) {
    it(`rejects: ${what}`, () => {
      const clean = JSON.parse(JSON.stringify(e));
      expect(checkIndexEntry(clean)).not.toBeNull();
      expect(recallIndex(index(clean))).toBe(false);
    });
  }
  it('policy: rejects what the schema rejects', () => {
    for (const p of [
      { ...DEFAULT_POLICY, scope: 'session' },
      { ...DEFAULT_POLICY, max_rehydration_tokens_per_call: 0 },
      { ...DEFAULT_POLICY, eviction_trigger: undefined },
    ]) {
      const clean = JSON.parse(JSON.stringify(p));
      expect(checkPolicy(clean)).not.toBeNull();
      expect(policy(clean)).toBe(false);
    }
  });
});
