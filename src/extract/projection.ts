import { isUtf8 } from 'node:buffer';
import { canonicalSha256, sha256Hex, sortedUnique } from '../protocol/canonical-json.js';
import { UsageError } from '../protocol/errors.js';
import { type HydrationPolicy, policyHash } from '../protocol/policy.js';
import { PROJECTION_VERSION } from '../protocol/types.js';
import { hasLoneSurrogate, pythonRstrip } from './python-text.js';
import { extractTermsNfc } from './terms.js';
import { referenceTokenizer } from './tokenizer.js';

export { codePointLength, pythonRstrip } from './python-text.js';

/** What {@link project} needs: one turn and the active policy. */
export interface ProjectionInput {
  stepId: number;
  summary: string;
  /** The raw payload; empty or absent means the summary is the payload (as the reference does). */
  payload: string | Uint8Array;
  /** Explicit lists replace the extracted ones and are kept as given. */
  files?: string[];
  commands?: string[];
  errors?: string[];
  policy: HydrationPolicy;
}

/** The projection of one turn: the payload in both forms, the three hashes' inputs and results. */
export interface Projection {
  /** The exact payload bytes (`payload_sha256` is over these). */
  payloadBytes: Uint8Array;
  /** The payload as text; a lossy (U+FFFD) decoding when `encoding` is `base64`. */
  payloadText: string;
  /** `utf8` when the bytes are valid UTF-8; `base64` when `raw_content` must store them encoded. */
  encoding: 'utf8' | 'base64';
  normalized_content: string;
  payload_sha256: string;
  projection_sha256: string;
  folding_policy_hash: string;
  /** Extracted identifiers (sorted unique). */
  identifiers: string[];
  /** Extracted (sorted unique) or explicit (as given) lists, as the node and index store them. */
  files: string[];
  commands: string[];
  errors: string[];
  /** Reference estimate: `max(1, codepoints // 4)` of the payload text. */
  token_estimate: number;
}

const lossyUtf8 = new TextDecoder('utf-8', { fatal: false, ignoreBOM: true });
const strictUtf8 = new TextDecoder('utf-8', { fatal: true, ignoreBOM: true });

function checkText(value: string, what: string, stepId: number): void {
  if (hasLoneSurrogate(value)) {
    throw new UsageError(
      `${what} of step ${stepId} contains a lone surrogate and has no UTF-8 form; pass the payload as bytes (Uint8Array) instead`,
      { stepId },
    );
  }
}

function checkList(value: unknown, what: string, stepId: number): string[] | undefined {
  if (value === undefined) return undefined;
  if (!Array.isArray(value) || value.some((v) => typeof v !== 'string')) {
    throw new UsageError(`explicit ${what} of step ${stepId} must be a list of strings`, {
      stepId,
    });
  }
  for (const v of value as string[]) checkText(v, `an explicit ${what} entry`, stepId);
  return [...(value as string[])];
}

interface Payload {
  bytes: Uint8Array;
  text: string;
  encoding: 'utf8' | 'base64';
}

function resolvePayload(summary: string, payload: string | Uint8Array, stepId: number): Payload {
  if (typeof payload === 'string') {
    const text = payload === '' ? summary : payload;
    checkText(text, 'the payload', stepId);
    return { bytes: Buffer.from(text, 'utf8'), text, encoding: 'utf8' };
  }
  if (!(payload instanceof Uint8Array)) {
    throw new UsageError(`the payload of step ${stepId} must be a string or a Uint8Array`, {
      stepId,
    });
  }
  if (payload.length === 0) return resolvePayload(summary, summary, stepId);
  // A private copy: the hash and the stored bytes must not diverge if the caller reuses its buffer.
  const bytes = new Uint8Array(payload);
  if (isUtf8(bytes)) return { bytes, text: strictUtf8.decode(bytes), encoding: 'utf8' };
  return { bytes, text: lossyUtf8.decode(bytes), encoding: 'base64' };
}

/**
 * Projects one turn exactly as the reference `ipcf-projection-v2` does: resolves the payload,
 * extracts terms, and computes `payload_sha256`, `normalized_content`, `folding_policy_hash`
 * and `projection_sha256`. Throws {@link UsageError} for input that has no byte form.
 *
 * @example
 * const p = project({ stepId: 1, summary: 'Port 5433', payload: '$ psql -p 5433\n',
 *   policy: DEFAULT_POLICY });
 * p.normalized_content; // '$ psql -p 5433'
 * p.commands; // ['psql -p 5433']
 */
export function project(input: ProjectionInput): Projection {
  const { stepId, summary, policy } = input;
  if (!Number.isSafeInteger(stepId) || stepId < 0) {
    throw new UsageError(`step id must be a non-negative integer, got ${String(stepId)}`);
  }
  if (typeof summary !== 'string') {
    throw new UsageError(`the summary of step ${stepId} must be a string`, { stepId });
  }
  checkText(summary, 'the summary', stepId);
  const files = checkList(input.files, 'files', stepId);
  const commands = checkList(input.commands, 'commands', stepId);
  const errors = checkList(input.errors, 'errors', stepId);

  const payload = resolvePayload(summary, input.payload ?? '', stepId);
  const payloadNfc = payload.text.normalize('NFC');
  const normalized = pythonRstrip(payloadNfc);
  const terms = extractTermsNfc(summary.normalize('NFC'), payloadNfc, { files, commands, errors });
  const folding_policy_hash = policyHash(policy);

  const projection_sha256 = canonicalSha256({
    projection_version: PROJECTION_VERSION,
    step_id: stepId,
    normalized_content: normalized,
    identifiers: terms.identifiers,
    // Extracted lists are already sorted unique; explicit ones are sorted only for the hash.
    files: files ? sortedUnique(files) : terms.files,
    commands: commands ? sortedUnique(commands) : terms.commands,
    errors: errors ? sortedUnique(errors) : terms.errors,
    folding_policy_hash,
  });

  return {
    payloadBytes: payload.bytes,
    payloadText: payload.text,
    encoding: payload.encoding,
    normalized_content: normalized,
    payload_sha256: sha256Hex(payload.bytes),
    projection_sha256,
    folding_policy_hash,
    identifiers: terms.identifiers,
    files: terms.files,
    commands: terms.commands,
    errors: terms.errors,
    token_estimate: referenceTokenizer.count(payload.text),
  };
}
