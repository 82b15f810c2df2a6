import {
  existsSync,
  lstatSync,
  mkdirSync,
  readFileSync,
  readlinkSync,
  writeFileSync,
} from 'node:fs';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { ContextFold } from '../engine/context-fold.js';
import { canonicalJson, sha256Hex } from '../protocol/canonical-json.js';
import { tempDir } from '../test-utils/temp-dir.js';
import { applyFsAction, FsActionError } from './fs-actions.js';

let tmp: { dir: string; cleanup: () => void };
let storeDir: string;
const inputs = new Map([['stray.json', Buffer.from('{"x":1}')]]);
const ctx = () => ({ root: tmp.dir, storeDir, inputs });
const node = (s: number) => join(storeDir, 'cold_nodes', `step_${String(s).padStart(6, '0')}.json`);
const index = () => JSON.parse(readFileSync(join(storeDir, 'recall_index.json'), 'utf8'));

beforeEach(async () => {
  tmp = tempDir('cf-fs-');
  storeDir = join(tmp.dir, 'main', '.contextfold');
  mkdirSync(join(tmp.dir, 'main'));
  const cf = await ContextFold.open({ dir: storeDir, tokenizer: 'reference' });
  await cf.foldMany([
    { stepId: 37, summary: 'PostgreSQL on 5433', content: 'port 5433 restored' },
    { stepId: 91, summary: 'PostgreSQL on 5434', content: 'port 5434' },
  ]);
  await cf.compact();
  await cf.close();
});
afterEach(() => tmp.cleanup());

describe('applyFsAction', () => {
  it('edits bytes: replace_text, overwrite_byte, truncate, and refuses no-op edits', () => {
    const before = readFileSync(node(37));
    applyFsAction(
      {
        fs: 'replace_text',
        path: 'cold_nodes/step_000037.json',
        find: '5433 restored',
        replace: '5432 restored',
      },
      ctx(),
    );
    expect(readFileSync(node(37), 'utf8')).toContain('5432 restored');
    expect(readFileSync(node(37)).length).toBe(before.length);
    expect(() =>
      applyFsAction(
        { fs: 'replace_text', path: 'cold_nodes/step_000037.json', find: 'nowhere', replace: 'x' },
        ctx(),
      ),
    ).toThrow(FsActionError);
    const b = readFileSync(node(91));
    applyFsAction(
      { fs: 'overwrite_byte', path: 'cold_nodes/step_000091.json', offset: -1, value: 0x20 },
      ctx(),
    );
    expect(readFileSync(node(91)).at(-1)).toBe(0x20);
    expect(() =>
      applyFsAction(
        { fs: 'overwrite_byte', path: 'cold_nodes/step_000091.json', offset: -1, value: 0x20 },
        ctx(),
      ),
    ).toThrow(/change nothing/);
    applyFsAction({ fs: 'truncate', path: 'cold_nodes/step_000091.json', length: -10 }, ctx());
    expect(readFileSync(node(91)).length).toBe(b.length - 10);
    expect(() =>
      applyFsAction({ fs: 'truncate', path: 'cold_nodes/step_000091.json', length: 10_000 }, ctx()),
    ).toThrow(/no truncation/);
  });

  it('simulates both crash phases on the index and the node files', () => {
    applyFsAction({ fs: 'crash_between_phases', step_id: 37, completed: 'node_write' }, ctx());
    expect(index().nodes['37']).toBeUndefined();
    expect(existsSync(node(37))).toBe(true);
    applyFsAction({ fs: 'crash_between_phases', step_id: 91, completed: 'index_update' }, ctx());
    expect(index().nodes['91']).toBeDefined();
    expect(existsSync(node(91))).toBe(false);
    expect(() => applyFsAction({ fs: 'remove_index_entry', step_id: 37 }, ctx())).toThrow(
      /no entry for step 37/,
    );
  });

  it('rewrites index fields, expanding $store_absolute', () => {
    applyFsAction(
      {
        fs: 'set_index_field',
        step_id: 37,
        field: 'file_path',
        value: { $store_absolute: 'cold_nodes/step_000037.json' },
      },
      ctx(),
    );
    expect(index().nodes['37'].file_path).toBe(node(37));
    expect(() =>
      applyFsAction(
        { fs: 'set_index_field', step_id: 37, field: 'file_path', value: node(37) },
        ctx(),
      ),
    ).toThrow(/already holds/);
  });

  it('forges a consistent artifact hash in node and index (rehash_node)', () => {
    applyFsAction(
      {
        fs: 'replace_text',
        path: 'cold_nodes/step_000037.json',
        find: '5433 restored',
        replace: '5432 restored',
      },
      ctx(),
    );
    applyFsAction({ fs: 'rehash_node', step_id: 37 }, ctx());
    const n = JSON.parse(readFileSync(node(37), 'utf8'));
    const { artifact_sha256, ...rest } = n;
    expect(artifact_sha256).toBe(sha256Hex(canonicalJson(rest)));
    expect(index().nodes['37'].artifact_sha256).toBe(artifact_sha256);
  });

  it('plants symlinks to outside copies and within the store, and writes stray files', () => {
    applyFsAction({ fs: 'copy_out', path: 'cold_nodes/step_000037.json', to: 'n37.json' }, ctx());
    applyFsAction(
      { fs: 'symlink', path: 'cold_nodes/step_000037.json', target: { outside: 'n37.json' } },
      ctx(),
    );
    expect(lstatSync(node(37)).isSymbolicLink()).toBe(true);
    expect(readlinkSync(node(37))).toBe(join(tmp.dir, 'outside', 'n37.json'));
    applyFsAction(
      {
        fs: 'symlink',
        path: 'cold_nodes/step_000091.json',
        target: { store: 'cold_nodes/step_000037.json' },
      },
      ctx(),
    );
    expect(readlinkSync(node(91))).toBe(node(37));
    applyFsAction({ fs: 'write', path: 'cold_nodes/step_000200.json', input: 'stray.json' }, ctx());
    expect(readFileSync(node(200), 'utf8')).toBe('{"x":1}');
  });

  it('keeps every path inside the store and refuses unknown actions', () => {
    writeFileSync(join(tmp.dir, 'victim.txt'), 'x');
    expect(() => applyFsAction({ fs: 'delete', path: '../../victim.txt' }, ctx())).toThrow(
      /plain relative path/,
    );
    expect(() => applyFsAction({ fs: 'delete', path: '/etc/hosts' }, ctx())).toThrow(
      /plain relative path/,
    );
    expect(() =>
      applyFsAction({ fs: 'delete', path: 'cold_nodes/step_000999.json' }, ctx()),
    ).toThrow(/does not exist/);
    expect(() => applyFsAction({ fs: 'teleport' }, ctx())).toThrow(/unknown filesystem action/);
    expect(existsSync(join(tmp.dir, 'victim.txt'))).toBe(true);
  });
});
