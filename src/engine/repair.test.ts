import {
  existsSync,
  lstatSync,
  mkdirSync,
  readdirSync,
  readFileSync,
  readlinkSync,
  renameSync,
  writeFileSync,
} from 'node:fs';
import { join, relative } from 'node:path';
import { describe, expect, it, vi } from 'vitest';
import {
  DEFAULT_CORPUS_DIR,
  loadCaseDoc,
  loadCaseInputs,
  loadManifest,
} from '../conformance/corpus.js';
import { applyFsAction } from '../conformance/fs-actions.js';
import type { ScriptStep } from '../conformance/types.js';
import { sha256Hex } from '../protocol/canonical-json.js';
import { tempDir } from '../test-utils/temp-dir.js';
import { ContextFold } from './context-fold.js';
import { REPAIR_LOG_FILE, repairStore } from './repair.js';
import type { FoldInput } from './types.js';

const CLOCK = '2026-01-01T00:00:00Z';

/** The action the dry run names for the (every) problem of a case, stated independently. */
const EXPECTED: Record<string, string> = {
  'conf-12--crash-a-orphaned-node': 'reindex',
  'conf-12--crash-b-broken-reference': 'drop_entry',
  'conf-12--crash-c-empty-file': 'drop_entry+quarantine',
  'conf-12--crash-c-partial-write': 'drop_entry+quarantine',
  'conf-09--one-byte-in-raw-content': 'drop_entry+quarantine',
  'conf-09--artifact-hash-forged': 'drop_entry+quarantine',
  'conf-09--node-file-swapped': 'drop_entry+quarantine',
  // The node is intact, its index entry was edited: the entry goes, the node is re-indexed.
  'conf-09--index-artifact-mismatch': 'drop_entry+reindex',
  'conf-12--path-traversal-file-path': 'drop_entry+reindex',
  'conf-12--symlink-out-of-store': 'drop_entry+quarantine',
  'conf-12--symlinked-cold-nodes-directory': 'drop_entry+quarantine',
};

/** Plays a conformance case's setup (open, folds, filesystem actions) up to its first check. */
async function playSetup(id: string): Promise<{ root: string; dir: string }> {
  const doc = loadCaseDoc(DEFAULT_CORPUS_DIR, id);
  const inputs = loadCaseInputs(DEFAULT_CORPUS_DIR, doc);
  const root = tempDir().dir;
  mkdirSync(join(root, 'main'), { recursive: true });
  const dir = join(root, 'main', '.contextfold');
  const open = () =>
    ContextFold.open({ dir, tokenizer: 'reference', clock: () => new Date(CLOCK) });
  let cf: ContextFold | null = null;
  for (const step of doc.script as ScriptStep[]) {
    if (
      step.expect !== undefined ||
      (step.op !== undefined && step.op !== 'open' && step.op !== 'fold_batch')
    )
      break;
    if (step.op === 'open') cf = await open();
    else if (step.op === 'fold_batch') {
      const text = inputs.get(String(step.turns))!.toString('utf8');
      const turns = text
        .split('\n')
        .filter((l) => l.trim() !== '')
        .map((l) => JSON.parse(l));
      await cf!.foldMany(
        turns.map(
          (t): FoldInput => ({
            stepId: t.step_id,
            summary: t.summary,
            content:
              t.raw_content_file !== undefined
                ? inputs.get(t.raw_content_file)
                : (t.raw_content as string | undefined),
            files: t.files,
            commands: t.commands,
            errors: t.errors,
          }),
        ),
      );
    } else {
      if (cf) {
        await cf.compact();
        await cf.close();
        cf = null;
      }
      applyFsAction(step, { root, storeDir: dir, inputs });
    }
  }
  await cf?.close();
  return { root, dir };
}

/**
 * The derived index (`index-<n>-<tag>.sqlite` with its WAL files) and the write lock: derived or
 * scratch, rewritten by reads and rebuilt from the durable files at will, so not store content.
 */
const DERIVED = /^index-\d+-[0-9a-f]{8}\.sqlite(-wal|-shm)?$|^write\.lock$/;

/**
 * Every file and symlink under a directory, with its bytes' hash (a link: its target), except
 * the derived index files of a store.
 */
function snapshot(dir: string): Map<string, string> {
  const out = new Map<string, string>();
  const walk = (d: string): void => {
    for (const name of readdirSync(d)) {
      if (DERIVED.test(name)) continue;
      const p = join(d, name);
      const st = lstatSync(p);
      if (st.isSymbolicLink()) out.set(relative(dir, p), `link:${readlinkSync(p)}`);
      else if (st.isDirectory()) walk(p);
      else out.set(relative(dir, p), sha256Hex(readFileSync(p)));
    }
  };
  if (existsSync(dir)) walk(dir);
  return out;
}

const CASES = loadManifest(DEFAULT_CORPUS_DIR)
  .cases.map((c) => c.id)
  .filter((id) => /^conf-(09|12)--/.test(id));

describe('repairStore on the CONF-09 tamper and CONF-12 crash states of the corpus', () => {
  it('covers every CONF-09 and CONF-12 case', () => {
    expect(CASES.filter((c) => c.startsWith('conf-12--crash-'))).toHaveLength(4);
    expect(CASES.filter((c) => c.startsWith('conf-09--')).length).toBeGreaterThanOrEqual(9);
  });

  for (const id of CASES) {
    it(id, async () => {
      const { root, dir } = await playSetup(id);
      const cf = await ContextFold.open({
        dir,
        tokenizer: 'reference',
        clock: () => new Date(CLOCK),
      });
      try {
        const before = await cf.validate();
        const bytesBefore = snapshot(join(root, 'main'));
        const dry = await repairStore(cf);
        expect(dry.applied).toBe(false);
        expect(dry.items.map((i) => i.problem)).toEqual(before.problems);
        for (const item of dry.items) expect(item.actions.length).toBeGreaterThan(0);
        expect(before.ok).toBe(id === 'conf-09--reformatted-file-is-not-tampered');
        const named = dry.items.map((i) => i.actions.map((a) => a.action).join('+'));
        if (EXPECTED[id]) expect([...new Set(named)]).toEqual([EXPECTED[id]]);
        // A dry run changes nothing.
        expect(snapshot(join(root, 'main'))).toEqual(bytesBefore);
        expect(await cf.validate()).toEqual(before);

        const entriesBefore = new Map<number, unknown>();
        for (const p of before.problems) {
          if (p.step_id !== null) entriesBefore.set(p.step_id, await cf.entry(p.step_id));
        }
        const done = await repairStore(cf, { apply: true, now: () => new Date(CLOCK) });
        expect(done.remaining).toEqual([]);
        expect((await cf.validate()).ok).toBe(true);
        const actions = done.items.flatMap((i) => i.actions);
        // Round one does what the dry run named.
        const firstRound = done.items.slice(0, dry.items.length).flatMap((i) => i.actions);
        // (An action shared by several problems, e.g. setting aside a symlinked cold_nodes, runs once.)
        expect(firstRound.map((a) => `${a.action} ${a.path}`)).toEqual([
          ...new Set(dry.items.flatMap((i) => i.actions).map((a) => `${a.action} ${a.path}`)),
        ]);
        // Every action is in the log, in order.
        const logLines = before.ok
          ? []
          : readFileSync(join(dir, REPAIR_LOG_FILE), 'utf8')
              .trimEnd()
              .split('\n')
              .map((l) => JSON.parse(l));
        expect(logLines.map((l) => `${l.action} ${l.path}`)).toEqual(
          actions.map((a) => `${a.action} ${a.path}`),
        );
        // A dropped entry is in the log whole (compaction removes it from recall_index.json).
        for (const l of logLines.filter((x) => x.action === 'drop_entry')) {
          expect(l.entry, `entry of step ${l.step_id} logged`).toEqual(
            entriesBefore.get(l.step_id),
          );
        }
        // Never deletes bytes: every file that was there is still there, or in quarantine/.
        const after = snapshot(join(root, 'main'));
        const moved = new Map(
          actions.flatMap((a) =>
            a.action === 'quarantine'
              ? [[relative(join(root, 'main'), a.path), relative(join(root, 'main'), a.to!)]]
              : [],
          ),
        );
        for (const [path, hash] of bytesBefore) {
          if (path.endsWith('.lock')) continue;
          const now = moved.has(path) ? moved.get(path)! : path;
          if (after.get(now) !== hash) {
            // A file inside a quarantined directory (a symlinked cold_nodes) moved with it.
            const parent = [...moved.keys()].find((m) => path.startsWith(`${m}/`));
            expect(parent, `${path} kept its bytes`).toBeDefined();
            expect(after.get(moved.get(parent!)! + path.slice(parent!.length))).toBe(hash);
          }
        }
        for (const a of actions) {
          if (a.action === 'quarantine')
            expect(a.to!.startsWith(join(dir, 'quarantine'))).toBe(true);
        }
      } finally {
        await cf.close();
      }
    });
  }
});

describe('repairStore beside a live fold', () => {
  it('a problem that a live fold resolves before its action runs is no error and no logged action', async () => {
    const root = tempDir().dir;
    const dir = join(root, '.contextfold');
    const other = join(root, 'other', '.contextfold');
    const turn = (s: number): FoldInput => ({ stepId: s, summary: `turn ${s}`, content: `c ${s}` });
    const src = await ContextFold.open({ dir: other, tokenizer: 'reference' });
    await src.foldMany([turn(1), turn(2)]);
    await src.close();
    const cf = await ContextFold.open({ dir, tokenizer: 'reference' });
    await cf.fold(turn(0));
    // What validate sees of a fold mid-way (under its lock): a node renamed into place but not
    // committed yet, and another node still in its temp file.
    const cold = join(dir, 'cold_nodes');
    const node = (s: number) => readFileSync(join(other, 'cold_nodes', `step_00000${s}.json`));
    writeFileSync(join(cold, 'step_000001.json'), node(1));
    const temp = join(cold, '.step_000002.json.tmp-1-2');
    writeFileSync(temp, node(2));
    const validate = cf.validate.bind(cf);
    let first = true;
    vi.spyOn(cf, 'validate').mockImplementation(async () => {
      const v = await validate();
      if (first) {
        first = false;
        expect(v.problems.map((p) => p.kind).sort()).toEqual(['integrity', 'orphaned_node']);
        // The fold goes on before repair gets the lock: it commits step 1, renames step 2 into place.
        await cf.reindexOrphan(1);
        renameSync(temp, join(cold, 'step_000002.json'));
      }
      return v;
    });
    const r = await repairStore(cf, { apply: true });
    expect(r.remaining).toEqual([]);
    // Step 2 became an orphan of its own (its fold "died" after the rename) and was re-indexed;
    // the vanished temp file and the committed step 1 needed nothing.
    expect(r.items.flatMap((i) => i.actions.map((a) => `${a.action} ${a.step_id}`))).toEqual([
      'reindex 2',
    ]);
    const log = readFileSync(join(dir, REPAIR_LOG_FILE), 'utf8').trim().split('\n');
    expect(log.map((l) => JSON.parse(l).action)).toEqual(['reindex']);
    expect(Buffer.from(await cf.hydrateBytes(1)).toString('utf8')).toBe('c 1');
    await cf.close();
  });
});

describe('repairStore arguments', () => {
  it("a non-boolean apply is refused before anything is planned or moved (apply: 'false' repaired)", async () => {
    const dir = join(tempDir().dir, '.contextfold');
    const cf = await ContextFold.open({ dir, tokenizer: 'reference' });
    await cf.fold({ stepId: 1, summary: 'one', content: 'first payload' });
    await cf.close();
    // A stray file a repair would quarantine.
    mkdirSync(join(dir, 'cold_nodes'), { recursive: true });
    const stray = join(dir, 'cold_nodes', 'step_000002.json');
    const engine = await ContextFold.open({ dir, tokenizer: 'reference' });
    writeFileSync(stray, '{');
    for (const apply of ['false', 'yes', 1]) {
      await expect(repairStore(engine, { apply: apply as never })).rejects.toMatchObject({
        code: 'USAGE',
      });
    }
    // A misspelt `aply: true` was a silent dry run.
    await expect(repairStore(engine, { aply: true } as never)).rejects.toMatchObject({
      code: 'USAGE',
      message: "repairStore has no option 'aply' (options: apply, now)",
    });
    expect(existsSync(stray)).toBe(true);
    expect(existsSync(join(dir, REPAIR_LOG_FILE))).toBe(false);
    await expect(repairStore(undefined as never)).rejects.toMatchObject({ code: 'USAGE' });
    await engine.close();
  });
});
