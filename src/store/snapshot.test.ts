import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { canonicalJson, prettyJson, sha256Hex } from '../protocol/canonical-json.js';
import { IPCF_VERSION, PROJECTION_VERSION } from '../protocol/types.js';
import { tempDir } from '../test-utils/temp-dir.js';
import { readSnapshot, SNAPSHOT_CHUNK, type SnapshotMember } from './snapshot-reader.js';
import { writeSnapshot } from './snapshot-writer.js';

async function members(
  path: string,
  chunkBytes?: number,
): Promise<{ read: unknown; members: SnapshotMember[] }> {
  const out: SnapshotMember[] = [];
  const read = await readSnapshot(
    path,
    (m) => {
      out.push(...m);
    },
    { chunkBytes },
  );
  return { read, members: out };
}

/** What JSON.parse makes of the file, in the reader's terms. */
function expected(text: string): SnapshotMember[] {
  const v = JSON.parse(text) as Record<string, unknown>;
  const out: SnapshotMember[] = [];
  for (const [key, value] of Object.entries(v)) {
    if (key === 'nodes' && typeof value === 'object' && value && !Array.isArray(value)) {
      out.push({ kind: 'field', key, value: {} });
      for (const [k, e] of Object.entries(value)) out.push({ kind: 'node', key: k, value: e });
    } else out.push({ kind: 'field', key, value });
  }
  return out;
}

const sortByKey = (m: SnapshotMember[]) =>
  [...m].sort((a, b) => (a.kind + a.key < b.kind + b.key ? -1 : 1));

const entry = (step: number, extra: Record<string, unknown> = {}) => ({
  step_id: step,
  summary: `turn ${step} — "quoted" \\ back\nslash ünï 𝔘`,
  identifiers: ['a', 'b{', '}c', '[d]'],
  evicted: false,
  ...extra,
});

describe('readSnapshot', () => {
  it('reads compact, pretty and indent-4 files as JSON.parse does, with their SHA-256', async () => {
    const dir = tempDir().dir;
    const index = {
      created_at: '2026-01-01T00:00:00Z',
      ipcf_version: IPCF_VERSION,
      nodes: Object.fromEntries([1, 2, 10, 37].map((s) => [String(s), entry(s)])),
      projection_version: PROJECTION_VERSION,
      session_id: 's',
    };
    const forms = [canonicalJson(index), prettyJson(index), JSON.stringify(index, null, 4)];
    for (const [i, text] of forms.entries()) {
      const p = join(dir, `f${i}.json`);
      writeFileSync(p, text);
      const r = await members(p);
      expect(r.read).toEqual({ ok: true, sha256: sha256Hex(readFileSync(p)) });
      expect(sortByKey(r.members)).toEqual(sortByKey(expected(text)));
    }
  });

  it('reads a file larger than its chunk, members cut at any byte', async () => {
    const dir = tempDir().dir;
    const nodes: Record<string, unknown> = {};
    // Over three chunks: the parser must not keep views into a buffer that is reused.
    for (let s = 0; s < 9000; s++) nodes[String(s)] = entry(s, { pad: 'x'.repeat(400 + (s % 7)) });
    const text = prettyJson({ ipcf_version: '1.1', nodes, projection_version: 'p' });
    const p = join(dir, 'big.json');
    writeFileSync(p, text);
    expect(text.length).toBeGreaterThan(3 << 20);
    const r = await members(p);
    expect(r.read).toMatchObject({ ok: true });
    expect(sortByKey(r.members)).toEqual(sortByKey(expected(text)));
  });

  it('reads a key whose opening quote is the last byte of a chunk, or next to it', async () => {
    // A key that starts a chunk's last byte must be read from its quote on, in the next chunk:
    // never from an offset of the previous chunk (a wrong key, or a crash).
    const dir = tempDir().dir;
    const head = '{"pad":"';
    for (const shift of [-2, -1, 0, 1]) {
      for (const nodeKey of [false, true]) {
        // The quote of the key after the padding field (a top field, or the second node).
        const before = nodeKey ? `${head.replace('pad', 'nodes":{"1')}` : head;
        const after = nodeKey ? '","22":{"step_id":22}},"z":1}' : '","nodes":{"7":{"a":1}},"z":1}';
        const fill = SNAPSHOT_CHUNK - 1 + shift - before.length - 2;
        const text = `${before}${'x'.repeat(fill)}${after}`;
        const quoteAt = before.length + fill + 2;
        expect(text[quoteAt]).toBe('"');
        const p = join(dir, `edge${shift}${nodeKey}.json`);
        writeFileSync(p, text);
        const r = await members(p);
        expect(r.read).toEqual({ ok: true, sha256: sha256Hex(readFileSync(p)) });
        expect(sortByKey(r.members)).toEqual(sortByKey(expected(text)));
      }
    }
  });

  it('agrees with JSON.parse on arbitrary JSON objects, read in chunks of 1 to 64 bytes', async () => {
    const dir = tempDir().dir;
    let n = 0;
    await fc.assert(
      fc.asyncProperty(
        fc.dictionary(fc.string(), fc.jsonValue()),
        fc.dictionary(fc.string(), fc.jsonValue()),
        // Small chunks put every kind of token across a chunk boundary somewhere.
        fc.integer({ min: 1, max: 64 }),
        async (fields, nodes, chunkBytes) => {
          const { nodes: _drop, ...rest } = fields;
          const text = JSON.stringify({ ...rest, nodes }, null, n % 2 === 0 ? 0 : 2);
          const p = join(dir, `p${n++}.json`);
          writeFileSync(p, text);
          const r = await members(p, chunkBytes);
          expect(r.read).toMatchObject({ ok: true });
          expect(sortByKey(r.members)).toEqual(sortByKey(expected(text)));
        },
      ),
      { numRuns: 150 },
    );
  });

  it('never throws on damaged bytes: refuses them, or reads exactly what JSON.parse reads', async () => {
    const dir = tempDir().dir;
    let n = 0;
    const damaged = fc
      .tuple(
        fc.dictionary(fc.string(), fc.jsonValue()),
        fc.nat(),
        fc.constantFrom('delete', 'insert', 'replace'),
        fc.constantFrom(
          '"',
          '\\',
          '{',
          '}',
          '[',
          ']',
          ',',
          ':',
          '\n',
          '\u0001',
          'x',
          '0',
          '\u00e9',
        ),
      )
      .map(([nodes, at, how, c]) => {
        const text = JSON.stringify({ ipcf_version: '1.1', nodes });
        const i = at % (text.length + 1);
        if (how === 'delete') return text.slice(0, i) + text.slice(i + 1);
        if (how === 'insert') return text.slice(0, i) + c + text.slice(i);
        return text.slice(0, i) + c + text.slice(i + 1);
      });
    await fc.assert(
      fc.asyncProperty(damaged, fc.integer({ min: 1, max: 48 }), async (text, chunkBytes) => {
        const p = join(dir, `d${n++}.json`);
        writeFileSync(p, text);
        const r = await members(p, chunkBytes);
        if ((r.read as { ok: boolean }).ok) {
          expect(sortByKey(r.members)).toEqual(sortByKey(expected(text)));
        }
      }),
      { numRuns: 300 },
    );
  });

  const bad: [string, string][] = [
    ['truncated', '{"ipcf_version":"1.1","nodes":{"1":{"step_id":1'],
    ['empty', ''],
    ['not an object', '[1,2]'],
    ['data after the object', '{"nodes":{}} x'],
    ['a node key twice', '{"nodes":{"1":{},"1":{}}}'],
    ['a field twice', '{"nodes":{},"nodes":{}}'],
    ['a missing comma', '{"a":1 "nodes":{}}'],
    ['a broken entry', '{"nodes":{"1":{"step_id":1,}}}'],
    ['a byte-order mark', '\uFEFF{"nodes":{}}'],
    ['a key with a raw line break', '{"a\nb":1,"nodes":{}}'],
    ['a node key with a bad escape', '{"nodes":{"\\x1":{}}}'],
  ];
  for (const [name, text] of bad) {
    it(`refuses ${name}`, async () => {
      const p = join(tempDir().dir, 'bad.json');
      writeFileSync(p, text);
      expect((await members(p)).read).toMatchObject({ ok: false });
    });
  }
});

describe('writeSnapshot', () => {
  it('writes exactly canonicalJson of the reference index, streaming pages in key order', async () => {
    const dir = tempDir().dir;
    const steps = [0, 1, 2, 9, 10, 11, 100, 999999, 1000000];
    const entries = steps.map((s) => entry(s));
    const byKey = entries
      .map((e) => ({ key: String(e.step_id), json: canonicalJson(e) }))
      .sort((a, b) => (a.key < b.key ? -1 : 1));
    async function* pages() {
      yield byKey.slice(0, 4);
      yield [];
      yield byKey.slice(4);
    }
    const p = join(dir, 'recall_index.json');
    const sha = await writeSnapshot(p, { createdAt: '2026-01-01T00:00:00Z', pages: pages() });
    const want = canonicalJson({
      created_at: '2026-01-01T00:00:00Z',
      ipcf_version: IPCF_VERSION,
      nodes: Object.fromEntries(entries.map((e) => [String(e.step_id), e])),
      projection_version: PROJECTION_VERSION,
    });
    expect(readFileSync(p, 'utf8')).toBe(want);
    expect(sha).toBe(sha256Hex(want));
  });
});
