import { hash } from 'node:crypto';
import {
  appendFileSync,
  existsSync,
  mkdirSync,
  readdirSync,
  readFileSync,
  renameSync,
  symlinkSync,
  writeFileSync,
} from 'node:fs';
import { homedir } from 'node:os';
import { join } from 'node:path';
import fc from 'fast-check';
import { afterAll, describe, expect, it } from 'vitest';
import type { Tokenizer } from '../extract/tokenizer.js';
import { IntegrityCheckError } from '../protocol/errors.js';
import type { IndexEntry } from '../protocol/types.js';
import { analyzeNode, type NodeAnalysis } from '../retrieval/node-analysis.js';
import { tempDir } from '../test-utils/temp-dir.js';
import { ContextFold } from './context-fold.js';
import {
  decodeCacheLine,
  defaultCacheDir,
  encodeCacheLine,
  RankedCache,
  rankedCacheFile,
  rankedCacheKey,
} from './ranked-cache.js';
import { RankedRetrieval } from './ranked-retrieval.js';
import type { FoldInput, OpenOptions } from './types.js';

const tmp = tempDir();
afterAll(() => tmp.cleanup());
let n = 0;
const fresh = (name: string) => join(tmp.dir, `${name}${n++}`);

const sha = (s: string) => hash('sha256', s, 'hex');
const KEY = sha('a key');

const analysis = (content: string, summary = 'tool: result'): NodeAnalysis =>
  analyzeNode({ summary, text: content, tokens: content.length });

const filler = (k: number) =>
  Array.from({ length: k }, (_, i) => `progress line ${i}: compiling module m${i}`).join('\n');

const TURNS: FoldInput[] = [
  { stepId: 0, summary: 'user: set up', content: 'Please set up the database and run the tests.' },
  {
    stepId: 1,
    summary: 'assistant: call',
    content: '{"command": "docker compose up -d postgres"}',
  },
  { stepId: 2, summary: 'tool: result', content: 'postgresql listening on port 5433' },
  {
    stepId: 3,
    summary: 'assistant: call',
    content: '{"command": "mix test test/billing_test.exs"}',
  },
  {
    stepId: 4,
    summary: 'tool: result',
    content: `${filler(300)}\nFinished in 2.1 seconds\n41 tests, 3 failures\n${filler(40)}`,
  },
  { stepId: 5, summary: 'assistant: note', content: 'Three billing tests fail; I will look.' },
  { stepId: 6, summary: 'tool: result', content: 'redis ready on 127.0.0.1:6380 (pid 4242)' },
  { stepId: 7, summary: 'tool: result', content: new Uint8Array([0xff, 0xfe, 0x41, 0x42]) },
  { stepId: 8, summary: 'empty turn about kafka' },
  ...Array.from({ length: 8 }, (_, i) => ({
    stepId: 9 + i,
    summary: 'assistant: note',
    content: `unrelated remark ${i} about styling widget${i} — ünïcödé ✓ 𝔘`,
  })),
];

const PROMPTS = [
  'Which port is postgresql listening on?',
  'How many billing tests failed in the last run?',
  'what pid does redis have?',
  'styling widget3',
  'kafka',
];

/** A store folded by one process (the fold path never writes the cache). */
async function seededStore(): Promise<string> {
  const dir = join(fresh('s'), '.contextfold');
  const cf = await ContextFold.open({ dir, cacheDir: false, tokenizer: 'reference' });
  await cf.foldMany(TURNS);
  await cf.close();
  return dir;
}

/** Everything a cold engine answers for the prompts. */
async function answers(options: OpenOptions) {
  const cf = await ContextFold.open({ tokenizer: 'reference', retrieval: 'ranked', ...options });
  const out = [];
  for (const p of PROMPTS) out.push({ scan: await cf.scan(p), pageIn: await cf.pageIn(p) });
  await cf.close();
  return out;
}

const cacheLines = (cacheDir: string): string[] => {
  if (!existsSync(cacheDir)) return [];
  return readdirSync(cacheDir).flatMap((f) =>
    readFileSync(join(cacheDir, f), 'utf8').split('\n').filter(Boolean),
  );
};

describe('cache keys, files and lines', () => {
  it('a key is 64 hex and covers the tokenizer, the payload hash and the summary', () => {
    const base = { tokenizer: 'o200k', payloadSha256: sha('p'), summary: 's' };
    const k = rankedCacheKey(base);
    expect(k).toMatch(/^[0-9a-f]{64}$/);
    expect(rankedCacheKey({ ...base })).toBe(k);
    expect(rankedCacheKey({ ...base, tokenizer: 'reference' })).not.toBe(k);
    expect(rankedCacheKey({ ...base, payloadSha256: sha('q') })).not.toBe(k);
    expect(rankedCacheKey({ ...base, summary: 's ' })).not.toBe(k);
  });

  it('the default directory follows CONTEXTFOLD_CACHE_DIR, then an absolute XDG_CACHE_HOME', () => {
    expect(defaultCacheDir({ CONTEXTFOLD_CACHE_DIR: '/x/y', XDG_CACHE_HOME: '/c' })).toBe('/x/y');
    expect(defaultCacheDir({ XDG_CACHE_HOME: '/c' })).toBe('/c/contextfold');
    expect(defaultCacheDir({ XDG_CACHE_HOME: 'relative' })).toBe(
      join(homedir(), '.cache', 'contextfold'),
    );
    expect(defaultCacheDir({ CONTEXTFOLD_CACHE_DIR: '' })).toBe(
      join(homedir(), '.cache', 'contextfold'),
    );
  });

  it('one file per store, named by the real path (a symlink to a store shares its file)', () => {
    const a = fresh('store');
    const b = fresh('store');
    mkdirSync(a);
    mkdirSync(b);
    const link = fresh('link');
    symlinkSync(a, link);
    const fa = rankedCacheFile({ cacheDir: '/c', storeDir: a });
    expect(fa).toMatch(/^\/c\/ranked-v1-[0-9a-f]{16}\.jsonl$/);
    expect(rankedCacheFile({ cacheDir: '/c', storeDir: link })).toBe(fa);
    expect(rankedCacheFile({ cacheDir: '/c', storeDir: b })).not.toBe(fa);
  });

  it('an entry round-trips exactly, for any text (property)', () => {
    fc.assert(
      fc.property(fc.string({ unit: 'grapheme', maxLength: 300 }), fc.string(), (text, summary) => {
        const a = analysis(text, summary);
        const line = encodeCacheLine(KEY, a);
        expect(line).toBeDefined();
        expect(line).not.toContain('\n');
        expect(decodeCacheLine(line!)).toEqual({ key: KEY, analysis: a });
        expect(encodeCacheLine(KEY, a)).toBe(line); // deterministic bytes
      }),
      { numRuns: 200 },
    );
  });

  it('a torn, flipped or forged line decodes to nothing', () => {
    const line = encodeCacheLine(KEY, analysis('port 5433 port 5433 postgresql'))!;
    for (let cut = 0; cut < line.length; cut++) {
      expect(decodeCacheLine(line.slice(0, cut))).toBeUndefined();
    }
    const at = line.indexOf('5433');
    expect(decodeCacheLine(`${line.slice(0, at)}6433${line.slice(at + 4)}`)).toBeUndefined();
    expect(decodeCacheLine(line.replace(/"c":"[0-9a-f]{16}"/, '"c":"0000000000000000"'))).toBe(
      undefined,
    );
    // Lines whose checksum is right but whose analysis breaks an index invariant.
    const forged = (body: object) => {
      const text = JSON.stringify(body);
      return `{"k":"${KEY}","c":"${sha(`${KEY}\n${text}`).slice(0, 16)}","a":${text}}`;
    };
    // A good checksum over an analysis that breaks an invariant (parseNodeAnalysis checks them
    // all; node-analysis.test.ts has the full list) or of another analysis version.
    const ok = analysis('port 5433');
    expect(decodeCacheLine(forged(ok))?.analysis).toEqual(ok);
    for (const bad of [
      { ...ok, version: 1 },
      { ...ok, keys: [...ok.keys].reverse() },
      { ...ok, length: ok.length + 1 },
      { ...ok, blocks: [] },
    ]) {
      expect(decodeCacheLine(forged(bad))).toBeUndefined();
    }
    expect(decodeCacheLine(`{"k":"${'g'.repeat(64)}"${line.slice(70)}`)).toBeUndefined();
  });

  it('reads the last line of a key that decodes; one append per flush; a torn tail is fenced', () => {
    const cacheDir = fresh('cache');
    const storeDir = fresh('store');
    const cache = new RankedCache({ cacheDir, storeDir });
    const a1 = analysis('alpha one');
    const a2 = analysis('alpha two');
    const other = sha('other');
    cache.queue(KEY, a1);
    cache.queue(KEY, a2); // the same key twice in a batch is written once
    cache.queue(other, a2);
    cache.flush();
    expect(readFileSync(cache.file, 'utf8').split('\n')).toHaveLength(3);
    const good = encodeCacheLine(KEY, a2)!;
    appendFileSync(cache.file, `${good}\n${good.slice(0, -5)}X}\n${good.slice(0, 40)}`);
    const hits = cache.read(new Set([KEY, other, sha('absent')]));
    expect([...hits.keys()].sort()).toEqual([KEY, other].sort());
    expect(hits.get(KEY)).toEqual(a2); // the corrupt later line is skipped, not trusted
    cache.queue(sha('third'), a1);
    cache.flush();
    const again = new RankedCache({ cacheDir, storeDir });
    expect(again.file).toBe(cache.file);
    expect(again.read(new Set([sha('third')])).get(sha('third'))).toEqual(a1);
  });

  it('a cache that cannot be read or written is ignored', () => {
    const blocker = fresh('file');
    writeFileSync(blocker, 'not a directory');
    const cache = new RankedCache({ cacheDir: join(blocker, 'sub'), storeDir: fresh('store') });
    expect(cache.read(new Set([KEY])).size).toBe(0);
    cache.queue(KEY, analysis('x'));
    expect(() => cache.flush()).not.toThrow();
  });
});

describe('a cold engine with the analysis cache', () => {
  it('gives exactly the answers of an engine that analysed every node', async () => {
    const dir = await seededStore();
    const cacheDir = fresh('cache');
    const uncached = await answers({ dir, cacheDir: false });
    const filling = await answers({ dir, cacheDir });
    expect(cacheLines(cacheDir)).toHaveLength(TURNS.length);
    const warm = await answers({ dir, cacheDir });
    expect(cacheLines(cacheDir)).toHaveLength(TURNS.length); // nothing appended on hits
    expect(filling).toEqual(uncached);
    expect(warm).toEqual(uncached);
    expect(uncached[0]?.pageIn.pages[0]?.content).toContain('port 5433');
    // The store keeps the exact reference layout: nothing was added to it.
    expect(readdirSync(dir).sort()).toEqual(['cold_nodes', 'recall_index.json']);
  });

  it('the cache bytes are deterministic (two cold engines write identical files)', async () => {
    const dir = await seededStore();
    const a = fresh('cache');
    const b = fresh('cache');
    await answers({ dir, cacheDir: a });
    await answers({ dir, cacheDir: b });
    const [fa] = readdirSync(a);
    expect(readFileSync(join(a, fa!), 'utf8')).toBe(readFileSync(join(b, fa!), 'utf8'));
  });

  it('a warm scan reads no node file: it works with every node file gone', async () => {
    const dir = await seededStore();
    const cacheDir = fresh('cache');
    const before = await answers({ dir, cacheDir });
    const nodes = join(dir, 'cold_nodes');
    const away = fresh('away');
    renameSync(nodes, away);
    mkdirSync(nodes);
    const cf = await ContextFold.open({ dir, cacheDir, tokenizer: 'reference' });
    for (const [i, p] of PROMPTS.entries()) {
      expect(await cf.scan(p)).toEqual(before[i]?.scan);
    }
    // Only the picked pages are read at page-in; put back exactly those.
    const picks = before[0]!.pageIn.pages.map((p) => p.step_id);
    for (const s of picks) {
      const f = `step_${String(s).padStart(6, '0')}.json`;
      renameSync(join(away, f), join(nodes, f));
    }
    const r = await cf.pageIn(PROMPTS[0]!);
    expect(r).toEqual(before[0]?.pageIn);
    await cf.close();
  });

  it('folding leaves the cache warm: the next process scans without reading a node', async () => {
    const cacheDir = fresh('cache');
    const dir = join(fresh('s'), '.contextfold');
    const folder = await ContextFold.open({ dir, cacheDir, tokenizer: 'reference' });
    await folder.foldMany(TURNS);
    await folder.close();
    expect(cacheLines(cacheDir)).toHaveLength(TURNS.length);
    const expected = await answers({ dir, cacheDir: false }); // analysed from the nodes
    const nodes = join(dir, 'cold_nodes');
    renameSync(nodes, fresh('away'));
    mkdirSync(nodes);
    const cf = await ContextFold.open({ dir, cacheDir, tokenizer: 'reference' });
    for (const [i, p] of PROMPTS.entries()) expect(await cf.scan(p)).toEqual(expected[i]?.scan);
    await cf.close({ compact: false });
    expect(cacheLines(cacheDir)).toHaveLength(TURNS.length);
  });

  it('a tampered node is refused at page-in even when its analysis is cached', async () => {
    const dir = await seededStore();
    const cacheDir = fresh('cache');
    await answers({ dir, cacheDir });
    const p = join(dir, 'cold_nodes', 'step_000002.json');
    writeFileSync(p, readFileSync(p, 'utf8').replace('port 5433', 'port 6666'));
    const cf = await ContextFold.open({ dir, cacheDir, tokenizer: 'reference' });
    const r = await cf.pageIn('Which port is postgresql listening on?');
    expect(r.pages.some((x) => x.step_id === 2 || x.content.includes('6666'))).toBe(false);
    expect(r.failures).toEqual([
      expect.objectContaining({ step_id: 2, error: 'IntegrityCheckError' }),
    ]);
    await cf.close();
  });

  it('a node that fails verification is never cached; on a miss it is refused at page-in too', async () => {
    const dir = await seededStore();
    const cacheDir = fresh('cache');
    const p = join(dir, 'cold_nodes', 'step_000002.json');
    writeFileSync(p, readFileSync(p, 'utf8').replace('port 5433', 'port 6666'));
    const cf = await ContextFold.open({ dir, cacheDir, tokenizer: 'reference' });
    const r = await cf.pageIn('Which port is postgresql listening on?');
    // It keeps its intent on the terms its index entry records; the refusal is reported.
    expect(r.pages.some((x) => x.step_id === 2 || x.content.includes('6666'))).toBe(false);
    expect(r.failures).toEqual([
      expect.objectContaining({ step_id: 2, error: 'IntegrityCheckError' }),
    ]);
    await cf.close();
    expect(cacheLines(cacheDir)).toHaveLength(TURNS.length - 1);
  });

  it('cacheDir: false writes nothing, not even to the default directory', async () => {
    const dir = await seededStore();
    const home = fresh('home');
    const names = ['CONTEXTFOLD_CACHE_DIR', 'XDG_CACHE_HOME', 'HOME'] as const;
    const saved = names.map((k) => process.env[k]);
    process.env.CONTEXTFOLD_CACHE_DIR = join(home, 'cf');
    process.env.XDG_CACHE_HOME = join(home, 'xdg');
    process.env.HOME = home;
    try {
      await answers({ dir, cacheDir: false });
      expect(existsSync(home)).toBe(false);
      await answers({ dir }); // the default honours CONTEXTFOLD_CACHE_DIR
      expect(cacheLines(join(home, 'cf'))).toHaveLength(TURNS.length);
    } finally {
      names.forEach((k, i) => {
        if (saved[i] === undefined) delete process.env[k];
        else process.env[k] = saved[i];
      });
    }
  });

  it('a cache directory that cannot be written does not fail a scan', async () => {
    const dir = await seededStore();
    const blocker = fresh('file');
    writeFileSync(blocker, 'a file where the cache directory should be');
    const uncached = await answers({ dir, cacheDir: false });
    expect(await answers({ dir, cacheDir: join(blocker, 'cache') })).toEqual(uncached);
    expect(await answers({ dir, cacheDir: blocker })).toEqual(uncached);
  });
});

/** A RankedRetrieval over in-memory turns that counts node reads and token counts. */
function counted(
  turns: { step: number; summary: string; text: string }[],
  cacheDir: string,
  initial: number[] = turns.map((t) => t.step),
) {
  const reads: number[] = [];
  let counts = 0;
  const tampered = new Set<number>();
  const tokenizer: Tokenizer = {
    name: 'words',
    count: (s) => {
      counts++;
      return s.split(/\s+/).filter(Boolean).length;
    },
  };
  const entries = new Map(
    turns.map((t) => [
      t.step,
      {
        step_id: t.step,
        summary: t.summary,
        payload_sha256: sha(t.text),
        identifiers: [],
        files: [],
        errors: [],
      } as unknown as IndexEntry,
    ]),
  );
  const ranked = new RankedRetrieval({
    tokenizer,
    entryOf: (s) => entries.get(s),
    verifiedText: (s) => {
      reads.push(s);
      if (tampered.has(s)) throw new IntegrityCheckError(`step ${s} does not verify`);
      return turns.find((t) => t.step === s)!.text;
    },
    storeDir: '/nonexistent/store',
    cacheDir,
  });
  ranked.reset(initial);
  return { ranked, reads, tampered, counts: () => counts };
}

describe('RankedRetrieval catch-up with the cache', () => {
  const turns = Array.from({ length: 40 }, (_, i) => ({
    step: i,
    summary: `tool: result ${i}`,
    text: `service s${i} listening on port ${5000 + i}\nstatus ok ${i % 3 === 0 ? 'error: boom' : ''}`,
  }));
  const caps = { perCall: 3000, perTurn: 3500 };
  const prompt = 'which port does service s17 listen on?';

  it('a hit reads no node and counts no tokens; only hydrated pages are read', () => {
    const cacheDir = fresh('cache');
    const cold = counted(turns, cacheDir);
    const expected = cold.ranked.pageIn(prompt, caps);
    expect(expected.pages.some((p) => p.content.includes('port 5017'))).toBe(true);
    const picked = expected.pages.map((p) => p.step_id);
    expect(cold.reads).toEqual([...turns.map((t) => t.step), ...picked]);

    const warm = counted(turns, cacheDir);
    const scan = warm.ranked.scan(prompt, caps);
    expect(scan).toEqual(expected.scan);
    expect(warm.reads).toEqual([]);
    expect(warm.counts()).toBe(0); // no tokenizer (no o200k vocabulary) on a cache hit
    expect(warm.ranked.pageIn(prompt, caps)).toEqual(expected);
    expect(warm.reads).toEqual(picked);
  });

  it('a corrupt or truncated cache line is ignored and that turn recomputed (and re-cached)', () => {
    const cacheDir = fresh('cache');
    const expected = counted(turns, cacheDir).ranked.pageIn(prompt, caps);
    const [file] = readdirSync(cacheDir);
    const path = join(cacheDir, file!);
    const lines = readFileSync(path, 'utf8').split('\n').filter(Boolean);
    // Flip one digit inside the 17th entry's body, and tear the last line mid-way.
    const at = lines[17]!.indexOf('5017');
    lines[17] = `${lines[17]!.slice(0, at)}5018${lines[17]!.slice(at + 4)}`;
    lines[39] = lines[39]!.slice(0, 120);
    writeFileSync(path, lines.join('\n'));

    const warm = counted(turns, cacheDir);
    expect(warm.ranked.pageIn(prompt, caps)).toEqual(expected);
    expect(warm.reads.slice(0, 2)).toEqual([17, 39]);
    const again = counted(turns, cacheDir);
    again.ranked.scan(prompt, caps);
    expect(again.reads).toEqual([]); // repaired by the append
    expect(readFileSync(path, 'utf8').split('\n').filter(Boolean)).toHaveLength(42);
  });

  it('after the first, only a large catch-up reads the cache; a few new turns are analysed', () => {
    const cacheDir = fresh('cache');
    counted(turns, cacheDir).ranked.scan(prompt, caps); // the cache now holds all 40
    const steps = turns.map((t) => t.step);
    const r = counted(turns, cacheDir, steps.slice(0, 30));
    r.ranked.scan(prompt, caps);
    expect(r.reads).toEqual([]);
    for (const s of steps.slice(30)) r.ranked.noteAdded(s); // 10 < CACHE_READ_MIN_PENDING
    r.ranked.scan(prompt, caps);
    expect(r.reads).toEqual(steps.slice(30));
    r.ranked.reset(steps); // the store reloaded its index: a large batch reads the cache again
    expect(r.ranked.scan(prompt, caps)).toEqual(counted(turns, cacheDir).ranked.scan(prompt, caps));
    expect(r.reads).toEqual(steps.slice(30));
  });

  it('a node that fails verification on a miss is indexed on its entry terms, never cached', () => {
    const cacheDir = fresh('cache');
    const r = counted(turns, cacheDir);
    r.tampered.add(17);
    r.ranked.scan(prompt, caps);
    expect(r.ranked.size).toBe(40);
    const next = counted(turns, cacheDir);
    next.tampered.add(17);
    next.ranked.scan(prompt, caps);
    expect(next.reads).toEqual([17]); // never cached: verified again
  });
});
