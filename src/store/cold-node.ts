import { canonicalSha256, sha256Hex } from '../protocol/canonical-json.js';
import type { ColdNode, IndexEntry } from '../protocol/types.js';

/** `artifact_sha256`: canonical JSON of the node with the key absent (as the reference computes it). */
export function artifactHash(node: Record<string, unknown>): string {
  const { artifact_sha256: _omit, ...rest } = node;
  return canonicalSha256(rest);
}

/** The exact payload bytes a node stores, decoding `raw_content` per `raw_content_encoding`. */
export function payloadBytes(
  node: Pick<ColdNode, 'raw_content' | 'raw_content_encoding' | 'summary'>,
): Buffer {
  if (node.raw_content_encoding === 'base64') return Buffer.from(node.raw_content, 'base64');
  // The reference replaces an empty payload by the summary before hashing (and stores the
  // summary); nodes this engine wrote before it did the same hold '' and read the same way.
  const text = node.raw_content === '' ? (node.summary ?? '') : node.raw_content;
  return Buffer.from(text, 'utf8');
}

/** True if `bytes` hash to `expected`. */
export function bytesMatch(bytes: Uint8Array, expected: string): boolean {
  return sha256Hex(bytes) === expected;
}

/** The index entry for a node, field for field as the reference writes it. */
export function indexEntryFor(node: ColdNode, filePath: string): IndexEntry {
  return {
    step_id: node.step_id,
    projection_version: node.projection_version,
    summary: node.summary,
    payload_sha256: node.payload_sha256,
    projection_sha256: node.projection_sha256,
    artifact_sha256: node.artifact_sha256,
    file_path: filePath,
    token_estimate: node.token_estimate,
    folded_at: node.folded_at,
    identifiers: node.identifiers,
    files: node.files,
    commands: node.commands,
    errors: node.errors,
    evicted: false,
  };
}
