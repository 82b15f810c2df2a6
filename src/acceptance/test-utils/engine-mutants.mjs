// Deliberately broken engines for the adapter mutation tests. Plain JavaScript so the same code
// runs inside the test process (wrapping src/) and, through mutant-preload.mjs, inside the CLI
// processes the MCP and hook subjects spawn (wrapping dist/). Each mutant wraps what
// ContextFold.open returns; the integration under test is untouched and never knows.
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { basename, dirname, join, resolve } from 'node:path';

const BROKEN = new Set(['INTEGRITY_CHECK', 'PATH_CONTAINMENT']);

/** A node as the file says it, wherever its index file_path (or a symlink) leads: no checks. */
async function rawNode(engine, step) {
  const entry = (await engine.entries()).find((e) => e.step_id === step);
  if (!entry) return null;
  const node = JSON.parse(readFileSync(resolve(dirname(engine.dir), entry.file_path), 'utf8'));
  const content = typeof node.raw_content === 'string' ? node.raw_content : '';
  return {
    step_id: step,
    content,
    tokens: Math.max(1, Math.floor([...content].length / 4)),
    chunk: 0,
    chunks: 1,
    truncated: false,
    payload_sha256: node.payload_sha256 ?? entry.payload_sha256,
    verified: true,
    encoding: 'utf8',
  };
}

/** Verification broken: a node that fails its checks is served as the file says. */
function skipVerification(engine) {
  const hydrate = engine.hydrate.bind(engine);
  const pageIn = engine.pageIn.bind(engine);
  engine.hydrate = async (step, options) => {
    try {
      return await hydrate(step, options);
    } catch (e) {
      if (!BROKEN.has(e?.code)) throw e;
      const raw = await rawNode(engine, step).catch(() => null);
      if (!raw) throw e;
      return raw;
    }
  };
  engine.pageIn = async (prompt, options) => {
    const r = await pageIn(prompt, options);
    const failures = [];
    for (const f of r.failures) {
      const raw = BROKEN.has(f.code) ? await rawNode(engine, f.step_id).catch(() => null) : null;
      if (raw) r.pages.push({ ...raw, matched_terms: [] });
      else failures.push(f);
    }
    return { ...r, failures };
  };
  return engine;
}

/** Eviction broken: `evict` records nothing, and every page once paged in stays resident. */
function keepPages(engine) {
  const pageIn = engine.pageIn.bind(engine);
  const resident = new Map();
  engine.evict = async (step) => ({ step_id: step, evicted_at: '1970-01-01T00:00:00Z' });
  engine.pageIn = async (prompt, options) => {
    const r = await pageIn(prompt, options);
    const fresh = new Set(r.pages.map((p) => p.step_id));
    const pages = [...r.pages, ...[...resident.values()].filter((p) => !fresh.has(p.step_id))];
    for (const p of r.pages) resident.set(p.step_id, p);
    return { ...r, pages, tokens: pages.reduce((n, p) => n + p.tokens, 0) };
  };
  return engine;
}

/** Session isolation broken: what this store does not have is answered from the stores beside it. */
function leakSiblings(engine, open) {
  // A store is a directory of its session (`<root>/<id>`), or a `.contextfold` inside it
  // (the proxy's `<root>/sessions/<id>/.contextfold`): its siblings are the other sessions'.
  const siblings = () => {
    const nested = basename(engine.dir) === '.contextfold';
    const own = nested ? dirname(engine.dir) : engine.dir;
    const parent = dirname(own);
    if (!existsSync(parent)) return [];
    return readdirSync(parent)
      .filter((n) => n !== basename(own))
      .map((n) => (nested ? join(parent, n, '.contextfold') : join(parent, n)))
      .filter((d) => existsSync(join(d, 'cold_nodes')));
  };
  const borrowed = new Map();
  const withSibling = async (fn) => {
    for (const dir of siblings()) {
      const other = await open({ dir, tokenizer: engine.tokenizer, cacheDir: false });
      try {
        const r = await fn(other, dir);
        if (r) return r;
      } finally {
        await other.close({ compact: false });
      }
    }
    return null;
  };
  const scan = engine.scan.bind(engine);
  const hydrate = engine.hydrate.bind(engine);
  const pageIn = engine.pageIn.bind(engine);
  engine.scan = async (prompt, options) => {
    const own = await scan(prompt, options);
    if (own.selected.length > 0) return own;
    return (
      (await withSibling(async (other, dir) => {
        const r = await other.scan(prompt, options);
        for (const p of r.selected) borrowed.set(p.step_id, dir);
        return r.selected.length > 0 ? r : null;
      })) ?? own
    );
  };
  engine.hydrate = async (step, options) => {
    const dir = borrowed.get(step);
    if (!dir) return hydrate(step, options);
    const other = await open({ dir, tokenizer: engine.tokenizer, cacheDir: false });
    try {
      return await other.hydrate(step, options);
    } finally {
      await other.close({ compact: false });
    }
  };
  engine.pageIn = async (prompt, options) => {
    const own = await pageIn(prompt, options);
    if (own.pages.length > 0) return own;
    return (
      (await withSibling(async (other) => {
        const r = await other.pageIn(prompt, options);
        return r.pages.length > 0 ? r : null;
      })) ?? own
    );
  };
  return engine;
}

/** The mutations, by name. */
export const ENGINE_MUTANTS = {
  verification: (engine) => skipVerification(engine),
  eviction: (engine) => keepPages(engine),
  isolation: (engine, open) => leakSiblings(engine, open),
};

/**
 * Replaces `ContextFoldClass.open` so that every engine it opens is wrapped by the named
 * mutant. Returns a function that restores the original.
 */
export function installEngineMutant(ContextFoldClass, name) {
  const mutate = ENGINE_MUTANTS[name];
  if (!mutate) throw new Error(`unknown engine mutant ${name}`);
  const open = ContextFoldClass.open;
  const original = (o) => open.call(ContextFoldClass, o);
  ContextFoldClass.open = async (o) => mutate(await original(o), original);
  return () => {
    ContextFoldClass.open = open;
  };
}
