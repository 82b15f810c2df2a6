import { project } from '../extract/projection.js';
import type { HydrationPolicy } from '../protocol/policy.js';
import {
  type ColdNode,
  IPCF_VERSION,
  PROJECTION_VERSION,
  type RedactionRecord,
} from '../protocol/types.js';
import { artifactHash } from '../store/cold-node.js';
import type { FoldInput } from './types.js';

/** What a fold's cold node is built from besides its input: the engine's settings and clock. */
export interface NodeContext {
  policy: HydrationPolicy;
  sessionId: string;
  /** The batch's fold time (`YYYY-MM-DDTHH:MM:SSZ`). */
  foldedAt: string;
  /** Whether the input went through redaction (the node's `sanitized`). */
  sanitized: boolean;
}

/** A built node and its payload as text (lossy only for a payload that is not UTF-8). */
export interface BuiltNode {
  node: ColdNode;
  text: string;
}

/**
 * The cold node of a fold input that is already redacted, its three hashes set: a pure function
 * of its arguments, so a worker thread builds the same bytes as the engine's own thread. An
 * empty payload is the summary, stored as `raw_content` as the reference stores it (its
 * `hydrate` prints `raw_content` as it is). Throws a `UsageError` on input with no UTF-8 form.
 *
 * @example
 * const { node } = buildNode({ stepId: 37, summary: 'Port 5433', content: '$ psql -p 5433' }, [],
 *   { policy: DEFAULT_POLICY, sessionId: 'default-session', foldedAt: '2026-01-01T00:00:00Z', sanitized: false });
 */
export function buildNode(
  input: FoldInput,
  records: readonly RedactionRecord[],
  ctx: NodeContext,
): BuiltNode {
  const p = project({
    stepId: input.stepId,
    summary: input.summary,
    payload: input.content ?? '',
    files: input.files,
    commands: input.commands,
    errors: input.errors,
    policy: ctx.policy,
  });
  const raw =
    p.encoding === 'base64' ? Buffer.from(p.payloadBytes).toString('base64') : p.payloadText;
  const node: ColdNode = {
    ipcf_version: IPCF_VERSION,
    projection_version: PROJECTION_VERSION,
    step_id: input.stepId,
    session_id: ctx.sessionId,
    folded_at: ctx.foldedAt,
    summary: input.summary,
    raw_content: raw,
    ...(p.encoding === 'base64' ? { raw_content_encoding: 'base64' as const } : {}),
    normalized_content: p.normalized_content,
    payload_sha256: p.payload_sha256,
    projection_sha256: p.projection_sha256,
    identifiers: p.identifiers,
    files: p.files,
    commands: p.commands,
    errors: p.errors,
    token_estimate: p.token_estimate,
    sanitized: ctx.sanitized,
    ...(records.length > 0 ? { redactions: [...records] } : {}),
    status: 'cold',
    artifact_sha256: '',
  };
  node.artifact_sha256 = artifactHash(node);
  return { node, text: p.payloadText };
}
