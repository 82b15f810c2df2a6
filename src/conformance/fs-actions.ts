import {
  cpSync,
  lstatSync,
  mkdirSync,
  readFileSync,
  rmSync,
  symlinkSync,
  truncateSync,
  writeFileSync,
} from 'node:fs';
import { dirname, join } from 'node:path';
import { canonicalJson, prettyJson, sha256Hex } from '../protocol/canonical-json.js';
import type { ScriptStep } from './types.js';

/** Where a filesystem action runs: the case's work directory and the current store. */
export interface FsContext {
  /** The case's temporary work directory; `outside/` under it lies outside every store. */
  root: string;
  /** The current store directory (`<root>/<store>/.contextfold`). */
  storeDir: string;
  inputs: ReadonlyMap<string, Buffer>;
}

/** The actions that rewrite `recall_index.json` (the runner asks the subject to `compact` first). */
export const INDEX_ACTIONS = new Set([
  'remove_index_entry',
  'set_index_field',
  'crash_between_phases',
  'rehash_node',
]);

/** A filesystem action could not be applied (a corpus or store-layout problem, not a verdict). */
export class FsActionError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'FsActionError';
  }
}

function nodeFile(step: number): string {
  return `cold_nodes/step_${String(step).padStart(6, '0')}.json`;
}

function safeRel(p: unknown, what: string): string {
  if (typeof p !== 'string' || p.length === 0)
    throw new FsActionError(`${what} must be a relative path`);
  if (
    p.startsWith('/') ||
    p.includes('\\') ||
    p.split('/').some((s) => s === '..' || s === '.' || s === '')
  ) {
    throw new FsActionError(`${what} must be a plain relative path, got ${JSON.stringify(p)}`);
  }
  return p;
}

function int(v: unknown, what: string): number {
  if (typeof v !== 'number' || !Number.isSafeInteger(v))
    throw new FsActionError(`${what} must be an integer`);
  return v;
}

function mustExist(path: string): void {
  try {
    lstatSync(path);
  } catch {
    throw new FsActionError(`cannot act on ${path}: it does not exist`);
  }
}

function readIndex(ctx: FsContext): {
  path: string;
  index: { nodes: Record<string, Record<string, unknown>> };
} {
  const path = join(ctx.storeDir, 'recall_index.json');
  let index: unknown;
  try {
    index = JSON.parse(readFileSync(path, 'utf8'));
  } catch {
    throw new FsActionError(`recall_index.json is missing or unreadable after compact: ${path}`);
  }
  const nodes = (index as { nodes?: unknown }).nodes;
  if (typeof nodes !== 'object' || nodes === null)
    throw new FsActionError(`recall_index.json has no nodes: ${path}`);
  return { path, index: index as { nodes: Record<string, Record<string, unknown>> } };
}

function indexEntry(ctx: FsContext, step: number) {
  const { path, index } = readIndex(ctx);
  const entry = index.nodes[String(step)];
  if (!entry) {
    throw new FsActionError(
      `recall_index.json has no entry for step ${step} after compact (not the IPCF-1.1 layout?)`,
    );
  }
  return { path, index, entry };
}

function writeIndex(path: string, index: unknown): void {
  writeFileSync(path, prettyJson(index));
}

/** Resolves a field value, expanding `{"$store_absolute": p}` to the absolute path of a store file. */
function fieldValue(v: unknown, ctx: FsContext): unknown {
  if (typeof v === 'object' && v !== null && '$store_absolute' in v) {
    return join(
      ctx.storeDir,
      safeRel((v as Record<string, unknown>).$store_absolute, '$store_absolute'),
    );
  }
  return v;
}

function replaceAll(
  buf: Buffer,
  find: Buffer,
  repl: Buffer,
  count: number,
): { out: Buffer; n: number } {
  const parts: Buffer[] = [];
  let start = 0;
  let n = 0;
  for (;;) {
    if (count > 0 && n >= count) break;
    const at = buf.indexOf(find, start);
    if (at < 0) break;
    parts.push(buf.subarray(start, at), repl);
    start = at + find.length;
    n++;
  }
  parts.push(buf.subarray(start));
  return { out: Buffer.concat(parts), n };
}

/** A path inside the current store. */
function inStore(ctx: FsContext, p: unknown, what = 'path'): string {
  return join(ctx.storeDir, safeRel(p, what));
}

/** A path under `<root>/outside/`, outside every store. */
function outsideStores(ctx: FsContext, p: unknown, what = 'path'): string {
  return join(ctx.root, 'outside', safeRel(p, what));
}

type FsAction = (step: ScriptStep, ctx: FsContext) => void;

/** Copies a store file or directory; `to` is resolved only once `from` is known to exist. */
function copyTree(from: string, to: () => string): void {
  mustExist(from);
  const dest = to();
  mkdirSync(dirname(dest), { recursive: true });
  cpSync(from, dest, { recursive: true });
}

const writeAction: FsAction = (step, ctx) => {
  const data = typeof step.input === 'string' ? ctx.inputs.get(step.input) : undefined;
  if (!data) throw new FsActionError(`write names unknown input ${JSON.stringify(step.input)}`);
  const p = inStore(ctx, step.path);
  mkdirSync(dirname(p), { recursive: true });
  writeFileSync(p, data);
};

const deleteAction: FsAction = (step, ctx) => {
  const p = inStore(ctx, step.path);
  mustExist(p);
  rmSync(p, { recursive: true, force: true });
};

const truncateAction: FsAction = (step, ctx) => {
  const p = inStore(ctx, step.path);
  mustExist(p);
  const size = readFileSync(p).length;
  const n = int(step.length, 'length');
  const keep = n < 0 ? size + n : n;
  if (keep < 0 || keep >= size)
    throw new FsActionError(`truncate to ${keep} bytes of a ${size}-byte file is no truncation`);
  truncateSync(p, keep);
};

const overwriteByteAction: FsAction = (step, ctx) => {
  const p = inStore(ctx, step.path);
  mustExist(p);
  const buf = readFileSync(p);
  const off = int(step.offset, 'offset');
  const at = off < 0 ? buf.length + off : off;
  const value = int(step.value, 'value');
  if (at < 0 || at >= buf.length)
    throw new FsActionError(`offset ${off} is outside the ${buf.length}-byte file`);
  if (value < 0 || value > 255) throw new FsActionError('value must be a byte (0-255)');
  if (buf[at] === value)
    throw new FsActionError(
      `byte ${at} already holds ${value}: the overwrite would change nothing`,
    );
  buf[at] = value;
  writeFileSync(p, buf);
};

const replaceTextAction: FsAction = (step, ctx) => {
  const p = inStore(ctx, step.path);
  mustExist(p);
  if (typeof step.find !== 'string' || step.find === '' || typeof step.replace !== 'string') {
    throw new FsActionError('replace_text needs non-empty find and a replace string');
  }
  const count = step.count === undefined ? 0 : int(step.count, 'count');
  const { out, n } = replaceAll(
    readFileSync(p),
    Buffer.from(step.find, 'utf8'),
    Buffer.from(step.replace, 'utf8'),
    count,
  );
  if (n === 0)
    throw new FsActionError(`replace_text found no ${JSON.stringify(step.find)} in ${step.path}`);
  writeFileSync(p, out);
};

const reformatJsonAction: FsAction = (step, ctx) => {
  const p = inStore(ctx, step.path);
  mustExist(p);
  let value: unknown;
  try {
    value = JSON.parse(readFileSync(p, 'utf8'));
  } catch {
    throw new FsActionError(`reformat_json: ${step.path} is not JSON`);
  }
  if (step.style === 'compact') writeFileSync(p, JSON.stringify(value));
  else if (step.style === 'indent4') writeFileSync(p, `${JSON.stringify(value, null, 4)}\n`);
  else
    throw new FsActionError(
      `reformat_json style must be compact or indent4, got ${JSON.stringify(step.style)}`,
    );
};

const symlinkAction: FsAction = (step, ctx) => {
  const p = inStore(ctx, step.path);
  const t = step.target as { store?: unknown; outside?: unknown } | undefined;
  const target =
    t?.store !== undefined
      ? inStore(ctx, t.store, 'target.store')
      : t?.outside !== undefined
        ? outsideStores(ctx, t.outside, 'target.outside')
        : null;
  if (!target) throw new FsActionError('symlink needs target {store} or {outside}');
  mustExist(target);
  rmSync(p, { recursive: true, force: true });
  mkdirSync(dirname(p), { recursive: true });
  symlinkSync(target, p);
};

const removeIndexEntryAction: FsAction = (step, ctx) => {
  const s = int(step.step_id, 'step_id');
  const { path, index } = indexEntry(ctx, s);
  delete index.nodes[String(s)];
  writeIndex(path, index);
};

const setIndexFieldAction: FsAction = (step, ctx) => {
  const s = int(step.step_id, 'step_id');
  if (typeof step.field !== 'string' || step.field === 'step_id')
    throw new FsActionError('set_index_field needs a field other than step_id');
  const { path, index, entry } = indexEntry(ctx, s);
  const value = fieldValue(step.value, ctx);
  if (JSON.stringify(entry[step.field]) === JSON.stringify(value)) {
    throw new FsActionError(`index field ${step.field} of step ${s} already holds that value`);
  }
  entry[step.field] = value;
  writeIndex(path, index);
};

/** A fold interrupted after one of its two phases: the node without its entry, or the reverse. */
const crashBetweenPhasesAction: FsAction = (step, ctx) => {
  const s = int(step.step_id, 'step_id');
  if (step.completed === 'node_write') {
    mustExist(join(ctx.storeDir, nodeFile(s)));
    removeIndexEntryAction({ fs: 'remove_index_entry', step_id: s }, ctx);
  } else if (step.completed === 'index_update') {
    indexEntry(ctx, s);
    deleteAction({ fs: 'delete', path: nodeFile(s) }, ctx);
  } else {
    throw new FsActionError(`crash_between_phases: completed must be node_write or index_update`);
  }
};

/** A consistent forgery: the node's artifact hash recomputed and written to node and index. */
const rehashNodeAction: FsAction = (step, ctx) => {
  const s = int(step.step_id, 'step_id');
  const p = join(ctx.storeDir, nodeFile(s));
  mustExist(p);
  const node = JSON.parse(readFileSync(p, 'utf8')) as Record<string, unknown>;
  delete node.artifact_sha256;
  const artifact = sha256Hex(canonicalJson(node));
  node.artifact_sha256 = artifact;
  writeFileSync(p, prettyJson(node));
  const { path, index, entry } = indexEntry(ctx, s);
  entry.artifact_sha256 = artifact;
  writeIndex(path, index);
};

/** Every action of PROTOCOL.md §3 by its `fs` name. */
const FS_ACTIONS: ReadonlyMap<string, FsAction> = new Map<string, FsAction>([
  ['write', writeAction],
  [
    'copy',
    (step, ctx) => copyTree(inStore(ctx, step.from, 'from'), () => inStore(ctx, step.to, 'to')),
  ],
  [
    'copy_out',
    (step, ctx) => copyTree(inStore(ctx, step.path), () => outsideStores(ctx, step.to, 'to')),
  ],
  ['delete', deleteAction],
  ['truncate', truncateAction],
  ['overwrite_byte', overwriteByteAction],
  ['replace_text', replaceTextAction],
  ['reformat_json', reformatJsonAction],
  ['remove_index_entry', removeIndexEntryAction],
  ['set_index_field', setIndexFieldAction],
  ['crash_between_phases', crashBetweenPhasesAction],
  ['symlink', symlinkAction],
  ['rehash_node', rehashNodeAction],
]);

/**
 * Applies one runner filesystem action (conformance/PROTOCOL.md §3) to the store on disk. The
 * subject is closed while this runs. Throws {@link FsActionError} when the action cannot be
 * applied as written, so that a no-op tamper can never pass for a detected one.
 *
 * @example
 * applyFsAction({ fs: 'delete', path: 'cold_nodes/step_000091.json' }, ctx);
 */
export function applyFsAction(step: ScriptStep, ctx: FsContext): void {
  const action = typeof step.fs === 'string' ? FS_ACTIONS.get(step.fs) : undefined;
  if (!action) throw new FsActionError(`unknown filesystem action ${JSON.stringify(step.fs)}`);
  action(step, ctx);
}
