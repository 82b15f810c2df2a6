import { createHash } from 'node:crypto';
import { lstatSync, readFileSync, readlinkSync, writeFileSync } from 'node:fs';
import { dirname, join, relative } from 'node:path';
import { applyFsAction, FsActionError } from '../conformance/fs-actions.js';
import type { ScriptStep } from '../conformance/types.js';
import { prettyJson } from '../protocol/canonical-json.js';
import type { StoreAction } from './case-schema.js';
import {
  openForRunner,
  SetupError,
  type StoredNode,
  type StoreSnapshot,
} from './store-snapshot.js';

const nodeFile = (step: number) => `cold_nodes/step_${String(step).padStart(6, '0')}.json`;

/** What an action left on disk, re-read after the calls to prove nothing was repaired. */
export interface StoreEffect {
  describe: string;
  read(): Promise<string>;
  expected: string;
}

function fileState(path: string): string {
  try {
    const st = lstatSync(path);
    if (st.isSymbolicLink()) return `symlink:${readlinkSync(path)}`;
    if (st.isDirectory()) return 'directory';
    return `sha256:${createHash('sha256').update(readFileSync(path)).digest('hex')}`;
  } catch {
    return 'absent';
  }
}

async function entryState(storeDir: string, step: number): Promise<string> {
  const cf = await openForRunner(storeDir);
  try {
    const e = (await cf.entries()).find((x) => x.step_id === step);
    return e ? `file_path=${e.file_path} artifact=${e.artifact_sha256}` : 'no entry';
  } finally {
    await cf.close({ compact: false });
  }
}

/** Everything an action needs: where each session's store is, and the nodes found after setup. */
export interface ActionContext {
  workDir: string;
  storeDir(session: string): string;
  snapshot: StoreSnapshot;
}

/**
 * `edit_payload` and `forge_payload`: a text replacement in the node file, the texts escaped as
 * they appear inside its JSON; a forge then recomputes the hashes to match.
 */
function payloadSteps(
  a: Extract<StoreAction, { action: 'edit_payload' | 'forge_payload' }>,
  n: StoredNode,
): ScriptStep[] {
  const json = (s: string) => JSON.stringify(s).slice(1, -1);
  const steps: ScriptStep[] = [
    { fs: 'replace_text', path: nodeFile(n.step_id), find: json(a.find), replace: json(a.replace) },
  ];
  if (a.action === 'forge_payload') steps.push({ fs: 'rehash_node', step_id: n.step_id });
  return steps;
}

/** The node file, in its own store, of the other session's record a cross-session action names. */
function foreignNodePath(
  a: { from_session: string; from_record: string },
  ctx: ActionContext,
  node: (s: string, r: string) => StoredNode,
): string {
  const from = node(a.from_session, a.from_record);
  return join(ctx.storeDir(a.from_session), nodeFile(from.step_id));
}

/** Appends text to the raw content of a node copied out of the store (`escape_file_path`). */
function appendToRawContent(copy: string, text: string): void {
  const doc = JSON.parse(readFileSync(copy, 'utf8')) as { raw_content: string };
  doc.raw_content += text;
  writeFileSync(copy, prettyJson(doc));
}

/** The IPCF corpus filesystem actions (conformance/PROTOCOL.md §3) an adapter action stands for. */
function translate(a: StoreAction, ctx: ActionContext, node: (s: string, r: string) => StoredNode) {
  const steps: ScriptStep[] = [];
  const inputs = new Map<string, Buffer>();
  const outsideName = (n: StoredNode) => `${n.session}-step_${n.step_id}.json`;
  let after: (() => void) | null = null;
  switch (a.action) {
    case 'edit_payload':
    case 'forge_payload':
      steps.push(...payloadSteps(a, node(a.session, a.record)));
      break;
    case 'truncate_node':
      steps.push({
        fs: 'truncate',
        path: nodeFile(node(a.session, a.record).step_id),
        length: -a.drop_bytes,
      });
      break;
    case 'delete_node':
      steps.push({ fs: 'delete', path: nodeFile(node(a.session, a.record).step_id) });
      break;
    case 'unindex_node':
      steps.push({ fs: 'remove_index_entry', step_id: node(a.session, a.record).step_id });
      break;
    case 'escape_file_path': {
      const n = node(a.session, a.record);
      const copy = join(ctx.workDir, 'outside', outsideName(n));
      steps.push({ fs: 'copy_out', path: nodeFile(n.step_id), to: outsideName(n) });
      const value =
        a.style === 'absolute' ? copy : relative(dirname(ctx.storeDir(a.session)), copy);
      steps.push({ fs: 'set_index_field', step_id: n.step_id, field: 'file_path', value });
      after = () => appendToRawContent(copy, a.inject);
      break;
    }
    case 'symlink_node': {
      const n = node(a.session, a.record);
      steps.push({ fs: 'copy_out', path: nodeFile(n.step_id), to: outsideName(n) });
      steps.push({ fs: 'symlink', path: nodeFile(n.step_id), target: { outside: outsideName(n) } });
      break;
    }
    case 'symlink_cold_dir': {
      const to = `${a.session}-cold_nodes`;
      steps.push({ fs: 'copy_out', path: 'cold_nodes', to });
      steps.push({ fs: 'delete', path: 'cold_nodes' });
      steps.push({ fs: 'symlink', path: 'cold_nodes', target: { outside: to } });
      break;
    }
    case 'copy_foreign_node':
    case 'plant_foreign_orphan': {
      inputs.set('foreign', readFileSync(foreignNodePath(a, ctx, node)));
      const step = a.action === 'copy_foreign_node' ? node(a.session, a.record).step_id : a.step_id;
      steps.push({ fs: 'write', path: nodeFile(step), input: 'foreign' });
      break;
    }
    case 'point_into_session': {
      const n = node(a.session, a.record);
      const target = foreignNodePath(a, ctx, node);
      const value = relative(dirname(ctx.storeDir(a.session)), target);
      steps.push({ fs: 'set_index_field', step_id: n.step_id, field: 'file_path', value });
      break;
    }
  }
  return { steps, inputs, after };
}

/** The disk state an action leaves, as effects to re-check after the calls. */
function effectsOf(a: StoreAction, ctx: ActionContext, node: (s: string, r: string) => StoredNode) {
  const dir = ctx.storeDir(a.session);
  const files: string[] = [];
  const entries: number[] = [];
  switch (a.action) {
    case 'unindex_node':
    case 'escape_file_path':
    case 'point_into_session':
      entries.push(node(a.session, a.record).step_id);
      break;
    case 'forge_payload':
      entries.push(node(a.session, a.record).step_id);
      files.push(nodeFile(node(a.session, a.record).step_id));
      break;
    case 'symlink_cold_dir':
      files.push('cold_nodes');
      break;
    case 'plant_foreign_orphan':
      files.push(nodeFile(a.step_id));
      break;
    default:
      files.push(nodeFile(node(a.session, a.record).step_id));
  }
  return { dir, files, entries };
}

/**
 * Applies a case's store actions to the stores the integration wrote, through the IPCF corpus
 * filesystem actions (which refuse a no-op: a tamper that changes nothing must never pass for a
 * detected one). Each store is compacted first, so `recall_index.json` holds the whole page
 * table. Returns what each action left on disk, to check afterwards that nothing repaired it.
 *
 * @example
 * const effects = await applyStoreActions(input.store, { workDir, storeDir, snapshot });
 */
export async function applyStoreActions(
  actions: readonly StoreAction[],
  ctx: ActionContext,
): Promise<StoreEffect[]> {
  const node = (session: string, record: string): StoredNode => {
    const n = ctx.snapshot.record(session, record);
    if (!n) throw new SetupError(`store action names ${session}/${record}, which is not stored`);
    return n;
  };
  for (const session of new Set(actions.map((a) => a.session))) {
    const cf = await openForRunner(ctx.storeDir(session));
    try {
      await cf.compact();
    } finally {
      await cf.close({ compact: false });
    }
  }
  const effects: StoreEffect[] = [];
  for (const a of actions) {
    const { steps, inputs, after } = translate(a, ctx, node);
    for (const step of steps) {
      try {
        applyFsAction(step, { root: ctx.workDir, storeDir: ctx.storeDir(a.session), inputs });
      } catch (e) {
        if (e instanceof FsActionError)
          throw new SetupError(`store action ${a.action}: ${e.message}`);
        throw e;
      }
    }
    after?.();
    const { dir, files, entries } = effectsOf(a, ctx, node);
    for (const f of files) {
      const path = join(dir, f);
      effects.push({
        describe: `${a.session}/${f}`,
        expected: fileState(path),
        read: async () => fileState(path),
      });
    }
    for (const step of entries) {
      effects.push({
        describe: `${a.session} index entry of step ${step}`,
        expected: await entryState(dir, step),
        read: () => entryState(dir, step),
      });
    }
  }
  return effects;
}
