import type { OutgoingHttpHeaders } from 'node:http';
import type { CallReport } from '../../harness/per-call.js';

/** Request header naming the session; never forwarded upstream. */
export const SESSION_HEADER = 'x-contextfold-session';

/** Headers that describe one hop, never forwarded (RFC 9110 §7.6.1), plus those we recompute. */
const HOP_BY_HOP = new Set([
  'connection',
  'keep-alive',
  'proxy-authenticate',
  'proxy-authorization',
  'proxy-connection',
  'te',
  'trailer',
  'transfer-encoding',
  'upgrade',
  'content-length',
  'host',
  'expect',
]);

/** True for a header that must not cross the proxy. */
export function isHopByHop(name: string): boolean {
  return HOP_BY_HOP.has(name.toLowerCase());
}

/**
 * The header names a message's `Connection` header lists: they describe this hop too and are
 * not forwarded (RFC 9110 §7.6.1).
 *
 * @example
 * connectionListed('keep-alive, X-Hop-Secret'); // Set { 'keep-alive', 'x-hop-secret' }
 */
export function connectionListed(connection: string | null | undefined): Set<string> {
  const names = new Set<string>();
  for (const n of (connection ?? '').split(',')) {
    const name = n.trim().toLowerCase();
    if (name !== '') names.add(name);
  }
  return names;
}

/**
 * The headers to send upstream: the client's own (API keys and auth headers included: they
 * are forwarded, never stored), minus hop-by-hop headers (those its `Connection` header names
 * too) and the proxy's `x-contextfold-*`.
 */
export function upstreamHeaders(headers: Headers): OutgoingHttpHeaders {
  const out: OutgoingHttpHeaders = {};
  const listed = connectionListed(headers.get('connection'));
  headers.forEach((value, name) => {
    if (isHopByHop(name) || listed.has(name) || name.startsWith('x-contextfold-')) return;
    out[name] = value;
  });
  return out;
}

/**
 * The proxy's report of a call, as response headers: tokens of the client's history, tokens
 * sent, the difference, and the steps paged in and folded for this call.
 *
 * @example
 * reportHeaders('auto-3f2a', report)['x-contextfold-saved-tokens']; // '88601'
 */
export function reportHeaders(session: string, r: CallReport): Record<string, string> {
  return {
    'x-contextfold-session': session,
    'x-contextfold-turn': String(r.turn),
    'x-contextfold-tokens-in': String(r.history_tokens),
    'x-contextfold-tokens-sent': String(r.pack_tokens),
    'x-contextfold-saved-tokens': String(r.history_tokens - r.pack_tokens),
    'x-contextfold-paged-steps': r.paged_in.join(','),
    'x-contextfold-folded-steps': r.folded.join(','),
  };
}
