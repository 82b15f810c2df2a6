import { sha256Hex } from '../protocol/canonical-json.js';
import { isContextFoldError } from '../protocol/errors.js';
import { setOwnEntry } from '../protocol/own-entry.js';
import { pageFailure } from '../protocol/results.js';
import type { ColdNode, IndexEntry } from '../protocol/types.js';
import { artifactHash, payloadBytes } from '../store/cold-node.js';
import type { IndexBackend } from '../store/index-backend.js';
import type { HashCheck, NodeCheck, NodeFields } from './types.js';

/** Fields of a cold node the check reports as such; anything else lands in `extra`. */
const KNOWN_FIELDS = new Set([
  'ipcf_version',
  'projection_version',
  'step_id',
  'session_id',
  'folded_at',
  'summary',
  'raw_content',
  'raw_content_encoding',
  'normalized_content',
  'payload_sha256',
  'projection_sha256',
  'identifiers',
  'files',
  'commands',
  'errors',
  'token_estimate',
  'sanitized',
  'status',
  'artifact_sha256',
]);

const str = (v: unknown): string | null => (typeof v === 'string' ? v : null);

/** The node's fields without its payload (which can be megabytes; it is served separately). */
function fieldsOf(node: Record<string, unknown>): NodeFields {
  const extra: Record<string, unknown> = {};
  for (const k of Object.keys(node).sort())
    if (!KNOWN_FIELDS.has(k)) setOwnEntry(extra, k, node[k]);
  return {
    ipcf_version: str(node.ipcf_version),
    projection_version: str(node.projection_version),
    session_id: str(node.session_id),
    folded_at: str(node.folded_at),
    summary: str(node.summary),
    raw_content_encoding: str(node.raw_content_encoding),
    sanitized: typeof node.sanitized === 'boolean' ? node.sanitized : null,
    status: str(node.status),
    token_estimate: typeof node.token_estimate === 'number' ? node.token_estimate : null,
    extra,
  };
}

function hashChecks(entry: IndexEntry, node: Record<string, unknown> | null): HashCheck[] {
  let artifact: string | null = null;
  let payload: string | null = null;
  if (node) {
    try {
      artifact = artifactHash(node);
    } catch {}
    try {
      if (typeof node.raw_content === 'string')
        payload = sha256Hex(payloadBytes(node as unknown as ColdNode));
    } catch {}
  }
  const check = (
    name: HashCheck['name'],
    recomputed: string | null,
    recomputable: boolean,
  ): HashCheck => {
    const file = node ? str(node[name]) : null;
    const ok = file === entry[name] && (!recomputable || recomputed === file);
    return { name, index: entry[name], file, recomputed, ok };
  };
  return [
    check('artifact_sha256', artifact, true),
    check('payload_sha256', payload, true),
    // The projection is compared file against index, as hydrate does (never re-derived here).
    check('projection_sha256', null, false),
  ];
}

/**
 * Checks one indexed node for a person: the verdict is exactly what `hydrate` would decide
 * (`verifyNode`), and each of the three hashes is reported as stored in the index, stored in the
 * file and recomputed from the file, so a failure shows which one broke. Reads only; a failing
 * node is reported, never repaired.
 *
 * @example
 * const c = checkNode(store, entry); // { verified: false, problem: { code: 'INTEGRITY_CHECK', … }, hashes: [...] }
 */
export function checkNode(
  store: Pick<IndexBackend, 'verifyNode' | 'readNodeText' | 'nodePath'>,
  entry: IndexEntry,
): NodeCheck {
  const step = entry.step_id;
  let problem: NodeCheck['problem'] = null;
  const path = store.nodePath(step);
  try {
    store.verifyNode(entry);
  } catch (e) {
    if (!isContextFoldError(e)) throw e;
    const f = pageFailure(step, e);
    problem = {
      code: f.code,
      error: f.error,
      message: f.message,
      path: String(e.details.path ?? path),
    };
  }
  let node: Record<string, unknown> | null = null;
  const text = store.readNodeText(entry);
  if (text !== null) {
    try {
      const parsed = JSON.parse(text) as unknown;
      if (parsed !== null && typeof parsed === 'object' && !Array.isArray(parsed)) {
        node = parsed as Record<string, unknown>;
      }
    } catch {}
  }
  return {
    step_id: step,
    entry,
    path,
    verified: problem === null,
    problem,
    hashes: hashChecks(entry, node),
    node: node ? fieldsOf(node) : null,
  };
}
