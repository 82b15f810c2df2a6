import { randomBytes } from 'node:crypto';
import { existsSync, mkdirSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import type { ContextFold } from '../engine/context-fold.js';
import { ContextFold as Engine } from '../engine/context-fold.js';
import { canonicalJson, compareCodePoints, prettyJson } from '../protocol/canonical-json.js';
import { isoSeconds } from '../protocol/time.js';
import { NODE_FILE_RE, storeExists, storeLayout } from '../store/layout.js';
import { PgStore } from '../store/pg/pg-store.js';
import { writeSnapshot } from '../store/snapshot-writer.js';
import { LibrarySubject } from './library-subject.js';

/**
 * The library subject on a PostgreSQL store. The corpus edits files of a store directory between
 * its steps (tampering, crashes, orphans), so this subject keeps the directory as the place those
 * edits happen and the database as where the engine runs: each `open` loads the directory into a
 * fresh database store verbatim (tampered bytes, orphans and missing nodes included, nothing
 * verified on the way), and each `close` writes the database's state back into the directory
 * (node bytes as stored, `recall_index.json` and `eviction_log.json` in the reference layout).
 * A state a database cannot hold (a corrupt `recall_index.json`, a symlink) fails its case.
 */
export class PgMirrorSubject extends LibrarySubject {
  readonly #url: string;
  #n = 0;

  /** `url`: a PostgreSQL database (`postgres://user@host:port/db`), without `store_id`. */
  constructor(url: string) {
    super();
    this.#url = url;
  }

  protected override async storeOf(dir: string, clock?: Date): Promise<string> {
    const url = `${this.#url}?store_id=conf-${process.pid}-${randomBytes(3).toString('hex')}-${this.#n++}`;
    if (!storeExists(dir)) return url;
    const local = await Engine.open({ dir, readOnly: true, tokenizer: 'reference' });
    let entries: Awaited<ReturnType<ContextFold['entries']>>;
    let evictions: { step_id: number; evicted_at: string }[];
    try {
      entries = await local.entries();
      evictions = local.backend.evictions();
      // A corrupt index or journal has no rows to stand for it: the case cannot run here.
      local.backend.assertConsistent();
    } finally {
      await local.close({ compact: false });
    }
    const cold = storeLayout(dir).coldDir;
    const nodes = existsSync(cold)
      ? readdirSync(cold)
          .map((name) => ({ name, m: NODE_FILE_RE.exec(name) }))
          .filter((x) => x.m !== null)
          .map((x) => ({ step: Number(x.m![1]), body: readFileSync(join(cold, x.name)) }))
      : [];
    const store = new PgStore({ url, lockTimeoutMs: 10_000, clock: () => clock ?? new Date() });
    try {
      await store.loadVerbatim({
        nodes,
        entries,
        evictions,
        createdAt: createdAtOf(dir) ?? isoSeconds(clock ?? new Date()),
      });
    } finally {
      await store.close();
    }
    return url;
  }

  protected override async beforeClose(dir: string, engine: ContextFold): Promise<void> {
    const d = await (engine.backend as PgStore).dumpVerbatim();
    const L = storeLayout(dir);
    for (const p of [L.coldDir, L.indexPath, L.journalPath, L.evictionLogPath]) {
      rmSync(p, { recursive: true, force: true });
    }
    if (d.createdAt === null) return;
    mkdirSync(L.coldDir, { recursive: true });
    for (const n of d.nodes) {
      writeFileSync(join(L.coldDir, `step_${String(n.step).padStart(6, '0')}.json`), n.body);
    }
    const nodes = d.entries
      .map((e) => ({ key: String(e.step_id), json: canonicalJson(e) }))
      .sort((a, b) => compareCodePoints(a.key, b.key));
    async function* pages() {
      yield nodes;
    }
    await writeSnapshot(L.indexPath, { createdAt: d.createdAt, pages: pages() });
    if (d.evictions.length > 0) {
      writeFileSync(L.evictionLogPath, prettyJson({ evicted: d.evictions }));
    }
  }

  protected override storePath(path: string): string {
    const at = path.indexOf('#');
    return path.startsWith('postgres') && at >= 0 ? path.slice(at + 1) : super.storePath(path);
  }
}

function createdAtOf(dir: string): string | null {
  try {
    const v = JSON.parse(readFileSync(storeLayout(dir).indexPath, 'utf8')).created_at;
    return typeof v === 'string' ? v : null;
  } catch {
    return null;
  }
}
