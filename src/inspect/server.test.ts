import { spawnSync } from 'node:child_process';
import {
  cpSync,
  mkdirSync,
  readdirSync,
  readFileSync,
  renameSync,
  rmSync,
  writeFileSync,
} from 'node:fs';
import { createServer } from 'node:net';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { ContextFold } from '../engine/context-fold.js';
import { packSha256, renderPackText } from '../harness/pack.js';
import { replaySession } from '../harness/replay.js';
import { Session } from '../harness/session.js';
import { eventsPath, readEvents } from '../harness/session-events.js';
import { stepClock } from '../harness/test-utils/session-helpers.js';
import { tempDir } from '../test-utils/temp-dir.js';
import type {
  NodeResponse,
  NodesResponse,
  OverviewResponse,
  PackResponse,
  PayloadResponse,
  RecallResponse,
  ScanResponse,
  StoresResponse,
  TimelineResponse,
  ValidateResponse,
} from './api-types.js';
import { type Inspector, startInspector } from './server.js';
import { StoreView } from './store-view.js';
import {
  buildBrokenStore,
  buildOddStore,
  buildSessionStore,
  SESSION_OPTIONS,
  sessionTurns,
  treeSnapshot,
  XSS,
} from './test-utils/fixtures.js';

// Replay as is, counted: a request that must not replay the session can be checked.
vi.mock('../harness/replay.js', async (original) => {
  const m = await original<typeof import('../harness/replay.js')>();
  return { ...m, replaySession: vi.fn(m.replaySession) };
});

const tmp = tempDir('cf-inspect-');
const root = join(tmp.dir, 'work', '.contextfold');
const pristine = join(tmp.dir, 'pristine');
const cacheDir = join(tmp.dir, 'analysis-cache');
let inspector: Inspector;
let before: Record<string, string>;
let broken: { tampered: string; orphan: string };
const prevCache = process.env.CONTEXTFOLD_CACHE_DIR;

/** The routes of the app (paths after the token). */
const ROUTES = [
  '',
  'index.html',
  'style.css',
  'favicon.svg',
  'js/client/main.js',
  'api/stores',
  'api/overview',
  'api/disk',
  'api/nodes?offset=0&limit=5',
  'api/node?step=1',
  'api/payload?step=1',
  'api/validate',
  'api/recall?q=marker',
  'api/scan?q=marker3',
  'api/timeline',
  'api/pack?turn=0',
  'no/such/route',
];

const base = (): string => inspector.url; // http://127.0.0.1:PORT/TOKEN/
const origin = (): string => new URL(inspector.url).origin;
const token = (): string => new URL(inspector.url).pathname.split('/')[1]!;

async function get<T>(path: string): Promise<T> {
  const res = await fetch(`${base()}${path}`);
  expect(res.status, `${path}: ${res.status}`).toBe(200);
  return (await res.json()) as T;
}

beforeAll(async () => {
  // Folds and sessions here use their own cache; the inspector must never create one.
  process.env.CONTEXTFOLD_CACHE_DIR = cacheDir;
  await buildSessionStore(root);
  await buildOddStore(join(root, 'sessions', 'odd'));
  broken = await buildBrokenStore(join(root, 'claude-code', 'broken'));
  mkdirSync(join(root, 'sessions', 'not-a-store'), { recursive: true });
  cpSync(join(tmp.dir, 'work'), pristine, { recursive: true });
  process.env.CONTEXTFOLD_CACHE_DIR = join(tmp.dir, 'inspector-cache');
  before = treeSnapshot(join(tmp.dir, 'work'));
  inspector = await startInspector({ dir: root });
}, 120_000);

afterAll(async () => {
  await inspector?.close();
  if (prevCache === undefined) delete process.env.CONTEXTFOLD_CACHE_DIR;
  else process.env.CONTEXTFOLD_CACHE_DIR = prevCache;
  tmp.cleanup();
});

describe('the token: without it, 403 on every route', () => {
  it('serves every route with the token', async () => {
    for (const r of ROUTES) {
      const res = await fetch(`${base()}${r}`);
      expect(res.status, r).toBe(r === 'no/such/route' ? 404 : 200);
      await res.arrayBuffer();
    }
    const head = await fetch(`${base()}api/overview`, { method: 'HEAD' });
    expect(head.status).toBe(200);
    expect(await head.text()).toBe('');
    const root = await fetch(`${origin()}/${token()}`, { redirect: 'manual' });
    expect(root.status).toBe(302);
    expect(root.headers.get('location')).toBe(`/${token()}/`);
  });

  it('refuses every route without it, with a wrong one, a near miss, or the token in the query', async () => {
    const t = token();
    const wrong = `${t[0] === 'A' ? 'B' : 'A'}${t.slice(1)}`;
    const prefixes = ['', `${wrong}/`, `${t.slice(0, -1)}/`, `${t}x/`, `${t.toLowerCase()}/`];
    for (const r of ROUTES) {
      for (const p of prefixes) {
        const res = await fetch(`${origin()}/${p}${r}`);
        expect(res.status, `/${p}${r}`).toBe(403);
        expect(await res.text()).toBe('forbidden\n');
      }
      const q = await fetch(`${origin()}/${r}${r.includes('?') ? '&' : '?'}token=${t}`);
      expect(q.status).toBe(403);
    }
    // Other methods too: without the token 403, with it 405 (nothing writes).
    for (const method of ['POST', 'PUT', 'DELETE', 'PATCH']) {
      expect((await fetch(`${origin()}/api/stores`, { method })).status).toBe(403);
      const res = await fetch(`${base()}api/validate`, { method });
      expect(res.status).toBe(405);
      expect(res.headers.get('allow')).toBe('GET, HEAD');
    }
  });

  it('sends the security headers on every response, 403s included', async () => {
    for (const url of [`${base()}`, `${base()}api/overview`, `${origin()}/api/overview`]) {
      const res = await fetch(url);
      const csp = res.headers.get('content-security-policy') ?? '';
      expect(csp).toContain("default-src 'self'");
      expect(csp).toContain("script-src 'self'");
      expect(csp).not.toContain('unsafe-inline');
      expect(res.headers.get('x-content-type-options')).toBe('nosniff');
      expect(res.headers.get('referrer-policy')).toBe('no-referrer');
      expect(res.headers.get('cache-control')).toBe('no-store');
      await res.arrayBuffer();
    }
    const html = await (await fetch(base())).text();
    // The page loads only its own files: no inline script, no external URL.
    expect(html).not.toMatch(/<script(?![^>]*\bsrc=)/);
    expect(html).not.toMatch(/https?:\/\/|\/\/[a-z]/i);
  });
});

describe('what the API shows is the engine’s own answer', () => {
  it('finds the root store and the session stores beside it', async () => {
    const s = await get<StoresResponse>('api/stores');
    expect(s.stores.map((x) => x.id)).toEqual(['.', 'claude-code/broken', 'sessions/odd']);
    expect(s.stores[0]!.has_events).toBe(true);
    expect(s.stores[2]!.has_events).toBe(false);
  });

  it('overview and node pages match status and entries', async () => {
    const cf = await ContextFold.open({ dir: pristine + '/.contextfold', cacheDir: false });
    const status = await cf.status();
    const entries = await cf.entries();
    const o = await get<OverviewResponse>('api/overview?store=.');
    expect(o.nodes).toBe(status.nodes);
    expect(o.total_token_estimate).toBe(status.total_token_estimate);
    expect(o.evicted).toBe(status.evicted);
    const p = await get<NodesResponse>('api/nodes?store=.&offset=2&limit=3');
    expect(p.total).toBe(entries.length);
    expect(p.rows.map((r) => r.step_id)).toEqual(entries.slice(2, 5).map((e) => e.step_id));
    expect(p.rows[0]!.summary).toBe(entries[2]!.summary);
    // An offset past the end (an old link, a hand-edited URL) is the last page, not "501–500 of N".
    const last = Math.floor((entries.length - 1) / 3) * 3;
    for (const offset of [entries.length, 100_000]) {
      const q = await get<NodesResponse>(`api/nodes?store=.&offset=${offset}&limit=3`);
      expect(q.offset).toBe(last);
      expect(q.rows.map((r) => r.step_id)).toEqual(entries.slice(last).map((e) => e.step_id));
    }
    await cf.close({ compact: false });
  });

  it('a timeline offset past the end is the last page', async () => {
    const all = await get<TimelineResponse>('api/timeline?store=.');
    const t = await get<TimelineResponse>(`api/timeline?store=.&offset=${all.turns + 50}&limit=2`);
    const last = Math.floor((all.turns - 1) / 2) * 2;
    expect(t.offset).toBe(last);
    expect(t.rows.map((r) => r.pack_sha256)).toEqual(
      all.rows.slice(last).map((r) => r.pack_sha256),
    );
  });

  it('the node drawer shows the three hashes and the verified payload', async () => {
    const n = await get<NodeResponse>('api/node?store=sessions/odd&step=1');
    const cf = await ContextFold.open({
      dir: join(pristine, '.contextfold', 'sessions', 'odd'),
      cacheDir: false,
    });
    const c = await cf.checkNode(1);
    expect(n.verified).toBe(true);
    expect(n.hashes.map((h) => [h.name, h.index, h.ok])).toEqual(
      c.hashes.map((h) => [h.name, h.index, true]),
    );
    expect(n.summary).toBe(`tool: ${XSS}`);
    expect(n.sanitized).toBe(true); // written by a redacting engine (the default)
    const p = await get<PayloadResponse>('api/payload?store=sessions/odd&step=1');
    expect(p.lines[1]).toEqual([{ kind: 'text', text: XSS }]);
    const bin = await get<PayloadResponse>('api/payload?store=sessions/odd&step=2');
    expect(bin.valid_utf8).toBe(false);
    expect(bin.bytes).toBe((await cf.hydrateBytes(2)).length);
    await cf.close({ compact: false });
  });

  it('recall and scan give the engine’s candidates and picks; errors are one JSON line', async () => {
    const cf = await ContextFold.open({ dir: join(pristine, '.contextfold'), cacheDir: false });
    const q = 'marker3 output';
    const r = await get<RecallResponse>(`api/recall?store=.&q=${encodeURIComponent(q)}`);
    expect(r.candidates.map((c) => c.step_id)).toEqual(
      (await cf.recall(q)).candidates.slice(0, 50).map((c) => c.step_id),
    );
    for (const mode of ['ranked', 'reference'] as const) {
      const s = await get<ScanResponse>(`api/scan?store=.&mode=${mode}&q=${encodeURIComponent(q)}`);
      const own = await cf.scan(q, { mode });
      expect(s.selected.map((p) => [p.step_id, p.cost])).toEqual(
        own.selected.map((p) => [p.step_id, p.cost]),
      );
      expect(s.query_terms).toEqual(own.query_terms);
    }
    await cf.close({ compact: false });
    const bad = await fetch(`${base()}api/node?store=.&step=999999`);
    expect(bad.status).toBe(404);
    expect(await bad.json()).toMatchObject({ code: 'NODE_NOT_FOUND' });
    const missing = await fetch(`${base()}api/overview?store=..`);
    expect(missing.status).toBe(400);
    expect(((await missing.json()) as { message: string }).message).toMatch(/no store '\.\.'/);
    expect((await fetch(`${base()}api/nodes?limit=-1`)).status).toBe(400);
  });

  it('the timeline has one row per pack, with the recorded decisions and the replayed layers', async () => {
    const t = await get<TimelineResponse>('api/timeline?store=.');
    const events = readEvents(join(pristine, '.contextfold'));
    const built = events.filter((e) => e.type === 'pack_built');
    expect(t.recorded).toBe(true);
    expect(t.replay).toMatchObject({ ok: true, matches: true });
    expect(t.rows.map((r) => r.pack_sha256)).toEqual(
      built.map((e) => (e.type === 'pack_built' ? e.pack_sha256 : '')),
    );
    const pages = events.filter((e) => e.type === 'page_in');
    expect(pages.length).toBeGreaterThan(0);
    expect(t.rows.flatMap((r) => r.paged_in.map((p) => [p.step_id, p.matched_terms]))).toEqual(
      pages.map((e) => (e.type === 'page_in' ? [e.step_id, e.matched_terms] : [])),
    );
    for (const r of t.rows) {
      const l = r.layers!;
      expect(l.L0 + l.L1 + l.L2 + l.L3 + l.pages).toBe(r.tokens);
      expect(r.tokens - l.pages).toBe(r.baseline_tokens);
    }
    expect(t.rows.some((r) => r.folded.length > 0)).toBe(true);
    const paged = await get<TimelineResponse>('api/timeline?store=.&offset=3&limit=2');
    expect(paged.rows.map((r) => r.turn)).toEqual([3, 4]);
    const none = await get<TimelineResponse>('api/timeline?store=sessions/odd');
    expect(none.recorded).toBe(false);
  });

  it('the pack view is the pack as sent: same bytes, every message in its layer', async () => {
    const r = await replaySession({ dir: join(pristine, '.contextfold') });
    for (const turn of [0, r.packs.length - 1]) {
      const pack = r.packs[turn]!;
      const v = await get<PackResponse>(`api/pack?store=.&turn=${turn}`);
      expect(v.pack_sha256).toBe(packSha256(pack));
      expect(v.matches_recorded).toBe(true);
      const text = v.layers
        .flatMap((l) => l.messages)
        .map((m) => `${m.header}\n${m.segments.map((s) => s.text).join('')}\n\n`)
        .join('');
      expect(text).toBe(renderPackText(pack));
      expect(v.layers.find((l) => l.layer === 'L3')!.messages[0]!.segments[0]!.text).toContain(XSS);
    }
    const withPages = r.packs.find((p) => p.metadata.paged_in.length > 0)!;
    const v = await get<PackResponse>(`api/pack?store=.&turn=${withPages.turn}`);
    const archived = v.layers.flatMap((l) =>
      l.messages.flatMap((m) => m.segments.filter((s) => s.kind === 'archived')),
    );
    expect(archived.map((s) => s.step_id)).toEqual(
      withPages.metadata.paged_in.map((p) => p.step_id),
    );
    // A turn the log never started is refused from the log: no replay of the whole session.
    await get<TimelineResponse>('api/timeline?store=.');
    const replays = vi.mocked(replaySession).mock.calls.length;
    const out = await fetch(`${base()}api/pack?store=.&turn=999`);
    expect(out.status).toBe(400);
    expect(((await out.json()) as { message: string }).message).toMatch(
      /^this session has no turn 999; its turns are 0\.\.\d+$/,
    );
    expect(vi.mocked(replaySession).mock.calls.length).toBe(replays);
    // A fresh view (a direct link): the pack replays once, without the timeline's replay first.
    const fresh = new StoreView({ id: '.', dir: root, has_events: true });
    try {
      await expect(fresh.pack(999)).rejects.toMatchObject({ code: 'USAGE' });
      expect(vi.mocked(replaySession).mock.calls.length).toBe(replays);
      expect((await fresh.pack(withPages.turn)).layers.length).toBeGreaterThan(0);
      expect(vi.mocked(replaySession).mock.calls.length).toBe(replays + 1);
    } finally {
      await fresh.close();
    }
  });

  it('validate runs on request and reports each problem with its path', async () => {
    const v = await get<ValidateResponse>('api/validate?store=.');
    expect(v).toMatchObject({ ok: true, problems: [] });
    expect(v.checked).toBeGreaterThan(0);
    expect(v.sanitized).toBe(v.checked); // every node was written by a redacting engine
  });
});

describe('a store with problems', () => {
  it('validate lists each problem with its path; the drawer says which hash broke and serves no bytes', async () => {
    const v = await get<ValidateResponse>('api/validate?store=claude-code/broken');
    expect(v.ok).toBe(false);
    expect(v.checked).toBe(2);
    expect(v.problems.map((p) => [p.kind, p.step_id, p.path])).toEqual([
      ['integrity', 2, broken.tampered],
      ['orphaned_node', 9, broken.orphan],
    ]);
    const n = await get<NodeResponse>('api/node?store=claude-code/broken&step=2');
    expect(n.verified).toBe(false);
    expect(n.problem).toMatchObject({ code: 'INTEGRITY_CHECK', path: broken.tampered });
    expect(n.hashes.find((h) => h.name === 'artifact_sha256')!.ok).toBe(false);
    // The tampered file's own claims are not shown as the node's.
    expect(n).toMatchObject({ sanitized: null, session_id: null, status: null, extra: {} });
    const payload = await fetch(`${base()}api/payload?store=claude-code/broken&step=2`);
    expect(payload.status).toBe(409);
    const body = (await payload.json()) as { code: string; path: string };
    expect(body).toMatchObject({ code: 'INTEGRITY_CHECK', path: broken.tampered });
    expect(JSON.stringify(body)).not.toContain('edited bytes');
  });

  it('validate sends at most the first problems and counts them all', async () => {
    expect(
      (await get<ValidateResponse>('api/validate?store=claude-code/broken')).problems_total,
    ).toBe(2);
    const dir = join(root, 'claude-code', 'broken');
    const view = new StoreView({ id: 'x', dir, has_events: false }, { maxProblems: 1 });
    try {
      const v = await view.validate();
      expect(v.problems_total).toBe(2);
      expect(v.problems.map((p) => p.path)).toEqual([broken.tampered]);
    } finally {
      await view.close();
    }
  });
});

describe('validate on a store with a dead rebuild file', () => {
  it('sends the warnings validate gave, with code and path (not only the problems)', async () => {
    // Before, ValidateResponse had no warnings: DEAD_BUILD_FILE and the like were not shown.
    const dir = join(tmp.dir, 'dead-build', '.contextfold');
    const cf = await ContextFold.open({ dir });
    await cf.fold({ stepId: 1, summary: 'one', content: 'first payload' });
    await cf.close();
    const dead = join(
      dir,
      `index-9-0000dead.sqlite.build-${spawnSync(process.execPath, ['-e', '0']).pid}`,
    );
    writeFileSync(dead, 'x');
    const view = new StoreView({ id: 'x', dir, has_events: false });
    try {
      const v = await view.validate();
      expect(v).toMatchObject({ ok: true, problems: [] });
      expect(v.warnings).toEqual([
        {
          code: 'DEAD_BUILD_FILE',
          path: dead,
          message: `leftover file of a rebuild or compaction whose process is gone: ${dead}; the next command with write access to the store removes it (or delete it)`,
        },
      ]);
    } finally {
      await view.close();
    }
  });
});

describe('a corrupt derived index', () => {
  it('is rebuilt in memory and said so: in the overview and once to onWarning, as the CLI does', async () => {
    const dir = join(tmp.dir, 'corrupt-index', '.contextfold');
    const cf = await ContextFold.open({ dir });
    await cf.fold({ stepId: 1, summary: 'one', content: 'first payload' });
    await cf.close();
    const index = readdirSync(dir).find((n) => n.endsWith('.sqlite'))!;
    writeFileSync(join(dir, index), 'not a database at all, not even close');
    const told: [string, string][] = [];
    const app = await startInspector({
      dir,
      onWarning: (m, store) => told.push([m, store]),
    });
    try {
      const o = (await (await fetch(`${app.url}api/overview`)).json()) as OverviewResponse;
      expect(o.nodes).toBe(1);
      expect(o.warnings).toHaveLength(1);
      expect(o.warnings[0]).toContain(`${join(dir, index)} is not a usable index`);
      await fetch(`${app.url}api/nodes`);
      expect(told).toEqual([[o.warnings[0], '.']]);
    } finally {
      await app.close();
    }
  });
});

describe('the session log and its head', () => {
  it('a head removed or a log deleted after the timeline was read is refused, not served from the cache', async () => {
    const dir = join(tmp.dir, 'headed', '.contextfold');
    await buildSessionStore(dir, 2);
    const log = join(dir, 'events.jsonl');
    const view = new StoreView({ id: '.', dir, has_events: true });
    try {
      expect((await view.timeline(0, 10)).recorded).toBe(true);
      renameSync(`${log}.head`, join(dir, '..', 'head'));
      await expect(view.timeline(0, 10)).rejects.toMatchObject({ code: 'INTEGRITY_CHECK' });
      renameSync(join(dir, '..', 'head'), `${log}.head`);
      expect((await view.timeline(0, 10)).recorded).toBe(true);
      rmSync(log);
      await expect(view.timeline(0, 10)).rejects.toMatchObject({
        code: 'INTEGRITY_CHECK',
        message: expect.stringContaining(`${log} line 1 is missing`),
      });
    } finally {
      await view.close();
    }
  });
});

describe('bounded answers', () => {
  it('list rows carry the start of a long summary; the drawer has it whole', async () => {
    const dir = join(tmp.dir, 'long-summary', '.contextfold');
    const cf = await ContextFold.open({ dir, tokenizer: 'reference', cacheDir: false });
    const summary = `longsummary ${'x'.repeat(100_000)}`;
    await cf.fold({ stepId: 1, summary, content: 'output\n' });
    await cf.close();
    const view = new StoreView({ id: '.', dir, has_events: false });
    try {
      const row = (await view.nodes(0, 50)).rows[0]!;
      expect(row.summary).toBe(
        `${summary.slice(0, 2000)} … (${summary.length - 2000} more characters: open the node)`,
      );
      const hit = (await view.recall('longsummary', 50)).candidates[0]!;
      expect(hit.summary).toBe(row.summary);
      expect((await view.node(1)).summary).toBe(summary);
    } finally {
      await view.close();
    }
  });

  it('the node answer sends the first 300 terms of each kind and counts them all', async () => {
    const dir = join(tmp.dir, 'many-terms', '.contextfold');
    const cf = await ContextFold.open({ dir, tokenizer: 'reference', cacheDir: false });
    const lines = Array.from({ length: 400 }, (_, i) => `$ cat src/m${i}/f_${i}.ts`);
    await cf.fold({ stepId: 1, summary: 'many terms', content: `${lines.join('\n')}\n` });
    await cf.close();
    const view = new StoreView({ id: '.', dir, has_events: false });
    try {
      const n = await view.node(1);
      expect(n.term_counts).toMatchObject({ files: 400, commands: 400 });
      expect(n.files).toHaveLength(300);
      expect(n.commands).toHaveLength(300);
      expect(n.term_counts.identifiers).toBeGreaterThan(300);
      expect(n.identifiers).toHaveLength(300);
    } finally {
      await view.close();
    }
  });
});

describe('read-only by construction (CONF-08)', () => {
  it('after every endpoint, the whole directory is identical and no cache was created', async () => {
    for (const store of ['.', 'sessions/odd', 'claude-code/broken']) {
      for (const r of ROUTES) {
        const sep = r.includes('?') ? '&' : '?';
        await (
          await fetch(`${base()}${r}${r.startsWith('api/') ? `${sep}store=${store}` : ''}`)
        ).arrayBuffer();
      }
      await (await fetch(`${base()}api/scan?store=${store}&mode=reference&q=marker`)).arrayBuffer();
    }
    expect(treeSnapshot(join(tmp.dir, 'work'))).toEqual(before);
    expect(() => readdirSync(join(tmp.dir, 'inspector-cache'))).toThrow(/ENOENT/);
  });

  it('closing the inspector compacts nothing, and the next pack is byte-identical to one built without inspecting', async () => {
    await inspector.close();
    expect(treeSnapshot(join(tmp.dir, 'work'))).toEqual(before);
    const next = async (dir: string) => {
      const s = await Session.open({
        dir,
        ...SESSION_OPTIONS,
        clock: stepClock(Date.UTC(2025, 6, 1)),
      });
      const pack = await s.beforeTurn(sessionTurns(13)[12]!.prompt);
      await s.close();
      return { text: renderPackText(pack), events: readFileSync(eventsPath(dir), 'utf8') };
    };
    const inspected = await next(root);
    const untouched = await next(join(pristine, '.contextfold'));
    expect(inspected.text).toBe(untouched.text);
    expect(inspected.events).toBe(untouched.events);
  });
});

describe('binding', () => {
  it('refuses a non-loopback host without allowRemote, and warns with it', async () => {
    await expect(
      startInspector({ dir: pristine + '/.contextfold', host: '0.0.0.0' }),
    ).rejects.toThrow(/not a loopback address.*--allow-remote/);
    const open = await startInspector({
      dir: join(pristine, '.contextfold'),
      host: '0.0.0.0',
      allowRemote: true,
    });
    expect(open.warnings.join()).toMatch(/not loopback/);
    expect((await fetch(`http://127.0.0.1:${open.port}/api/stores`)).status).toBe(403);
    await open.close();
  });

  it('one clear error for a missing directory, an empty one, a bad port, a port in use', async () => {
    await expect(startInspector({ dir: join(tmp.dir, 'nope') })).rejects.toThrow(/no store at/);
    // A database store: said so, with the export to run, and never its password.
    const db = startInspector({ dir: 'postgres://cf:S3cret@127.0.0.1:1/cf?store_id=web' });
    await expect(db).rejects.toMatchObject({ code: 'USAGE' });
    await expect(db).rejects.toThrow(/not a database: postgres:\/\/cf:\*\*\*@.*export --to DIR/);
    mkdirSync(join(tmp.dir, 'empty'));
    await expect(startInspector({ dir: join(tmp.dir, 'empty') })).rejects.toThrow(
      /holds no contextfold store/,
    );
    await expect(startInspector({ dir: root, port: 70000 })).rejects.toThrow(/--port/);
    const busy = createServer();
    await new Promise<void>((r) => busy.listen(0, '127.0.0.1', () => r()));
    const port = (busy.address() as { port: number }).port;
    await expect(startInspector({ dir: root, port })).rejects.toThrow(/already in use/);
    busy.close();
  });
});
