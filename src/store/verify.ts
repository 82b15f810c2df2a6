import { readFileSync } from 'node:fs';
import { sha256Hex } from '../protocol/canonical-json.js';
import { BrokenReferenceError, IntegrityCheckError } from '../protocol/ipcf-errors.js';
import type { ColdNode, IndexEntry } from '../protocol/types.js';
import { artifactHash, payloadBytes } from './cold-node.js';
import { checkContainment } from './containment.js';
import type { StoreLayout } from './layout.js';

/** A cold node that passed every check, with its exact payload bytes. */
export interface VerifiedNode {
  node: ColdNode;
  bytes: Buffer;
  path: string;
}

const HEX64 = /^[0-9a-f]{64}$/;

/**
 * Reads and verifies one indexed cold node: path containment (always), existence, JSON,
 * `artifact_sha256` (file vs recomputed vs index), `payload_sha256` over the decoded payload
 * (file vs recomputed vs index; the reference never re-checks it) and the projection hash
 * against the index. Throws the IPCF error of the first failure; never returns a corrupted node.
 */
export function verifyNode(layout: StoreLayout, entry: IndexEntry): VerifiedNode {
  const step = entry.step_id;
  const path = checkContainment(layout, step, entry.file_path);
  let text: string;
  try {
    text = readFileSync(path, 'utf8');
  } catch (e) {
    const code = (e as NodeJS.ErrnoException).code;
    if (code === 'ENOENT') {
      throw new BrokenReferenceError(`step ${step}: cold node file is missing: ${path}`, {
        stepId: step,
        path,
      });
    }
    throw new IntegrityCheckError(`step ${step}: cannot read ${path}: ${code ?? e}`, {
      stepId: step,
      path,
    });
  }
  return verifyNodeText(entry, text, path);
}

/**
 * The checks of {@link verifyNode} after the bytes were read (any backend): JSON,
 * `artifact_sha256` (file vs recomputed vs index), `payload_sha256` over the decoded payload
 * (file vs recomputed vs index) and the projection hash against the index. `path` names the
 * node in errors.
 */
export function verifyNodeText(entry: IndexEntry, text: string, path: string): VerifiedNode {
  const step = entry.step_id;
  const bad = (why: string): never => {
    throw new IntegrityCheckError(`step ${step}: ${why}: ${path}`, { stepId: step, path });
  };
  let node: ColdNode;
  try {
    node = JSON.parse(text) as ColdNode;
  } catch {
    return bad('cold node is not valid JSON (truncated or corrupted)');
  }
  if (typeof node !== 'object' || node === null || Array.isArray(node)) {
    return bad('cold node is not a JSON object');
  }
  const stored = node.artifact_sha256;
  if (typeof stored !== 'string' || !HEX64.test(stored)) return bad('artifact_sha256 is missing');
  let recomputed: string;
  try {
    recomputed = artifactHash(node);
  } catch (e) {
    return bad(`cold node cannot be canonicalised (${(e as Error).message})`);
  }
  if (recomputed !== stored)
    return bad('artifact_sha256 does not match the file content (tampered)');
  if (stored !== entry.artifact_sha256) return bad('artifact_sha256 differs from the recall index');
  if (node.step_id !== step) return bad(`cold node holds step_id ${node.step_id}`);
  if (typeof node.raw_content !== 'string') return bad('raw_content is missing');
  if (node.raw_content_encoding !== undefined && node.raw_content_encoding !== 'base64') {
    return bad(`unknown raw_content_encoding ${JSON.stringify(node.raw_content_encoding)}`);
  }
  const bytes = payloadBytes(node);
  const payloadHash = sha256Hex(bytes);
  if (payloadHash !== node.payload_sha256) return bad('payload_sha256 does not match raw_content');
  if (payloadHash !== entry.payload_sha256)
    return bad('payload_sha256 differs from the recall index');
  if (node.projection_sha256 !== entry.projection_sha256) {
    return bad('projection_sha256 differs from the recall index');
  }
  return { node, bytes, path };
}
