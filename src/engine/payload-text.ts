// The one place a verified payload becomes text: ranking, token counting and hydrate read the
// same text, so a page costs what it serves.
import type { VerifiedNode } from '../store/verify.js';

const lossy = new TextDecoder('utf-8', { fatal: false, ignoreBOM: true });

/** Text of a verified node's payload (lossy only for non-UTF-8 payloads). */
export function payloadText(v: VerifiedNode): string {
  if (v.node.raw_content_encoding === 'base64') return lossy.decode(v.bytes);
  return v.node.raw_content === '' ? v.node.summary : v.node.raw_content;
}
