import { mkdirSync, symlinkSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { tempDir } from '../test-utils/temp-dir.js';
import { discoverStores } from './stores.js';

const tmp = tempDir('cf-stores-');
afterAll(() => tmp.cleanup());

describe('discoverStores', () => {
  it('finds session stores directly under sessions/<id>/ and the proxy’s sessions/<id>/.contextfold', () => {
    const root = join(tmp.dir, '.contextfold');
    const store = (d: string) => {
      mkdirSync(d, { recursive: true });
      writeFileSync(join(d, 'events.jsonl'), '');
    };
    store(join(root, 'sessions', 'middleware-chat'));
    store(join(root, 'sessions', 'auto-3f2a', '.contextfold'));
    mkdirSync(join(root, 'sessions', 'empty', 'nothing'), { recursive: true });
    expect(discoverStores(root).map((s) => [s.id, s.dir])).toEqual([
      ['sessions/auto-3f2a', join(root, 'sessions', 'auto-3f2a', '.contextfold')],
      ['sessions/middleware-chat', join(root, 'sessions', 'middleware-chat')],
    ]);
  });

  it('follows no symbolic link out of the tree it was given', () => {
    const root = join(tmp.dir, 'links', '.contextfold');
    const outside = join(tmp.dir, 'outside');
    mkdirSync(join(outside, 'leak'), { recursive: true });
    writeFileSync(join(outside, 'leak', 'events.jsonl'), '');
    mkdirSync(join(root, 'claude-code', 'linked'), { recursive: true });
    writeFileSync(join(root, 'events.jsonl'), '');
    symlinkSync(outside, join(root, 'sessions')); // sessions/ itself
    symlinkSync(join(outside, 'leak'), join(root, 'claude-code', 'linked', '.contextfold'));
    symlinkSync(join(outside, 'leak'), join(root, 'claude-code', 'direct')); // <id>/ (as before)
    expect(discoverStores(root).map((s) => s.id)).toEqual(['.']);
  });

  it('a directory without a store is a StoreNotFoundError, as for every other command', () => {
    const missing = join(tmp.dir, 'missing');
    expect(() => discoverStores(missing)).toThrow(
      expect.objectContaining({
        code: 'STORE_NOT_FOUND',
        message: `no store at ${missing}: run contextfold fold … or contextfold import … to create one, or pass --dir DIR`,
      }),
    );
    mkdirSync(join(tmp.dir, 'empty'));
    expect(() => discoverStores(join(tmp.dir, 'empty'))).toThrow(
      expect.objectContaining({ code: 'STORE_NOT_FOUND' }),
    );
  });
});
