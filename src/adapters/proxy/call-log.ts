import type { CallReport } from '../../harness/per-call.js';
import type { ApiKind } from './provider-errors.js';

/** The model endpoints the proxy folds. */
export type Endpoint = 'messages' | 'count_tokens' | 'chat.completions';

/** How a folded call ended. */
export type CallOutcome =
  /** The upstream answered (any status, passed through as it came). */
  | 'ok'
  /** The upstream response broke off midway. */
  | 'dropped'
  /** The client went away before the answer was complete. */
  | 'client_closed'
  /** The upstream could not be reached (nothing was written to the session). */
  | 'unreachable'
  /** The upstream did not answer in time. */
  | 'timeout'
  /** The upstream does not serve the requested model (nothing was written to the session). */
  | 'unknown_model'
  /** The proxy itself failed (the message says why). */
  | 'error';

/** Milliseconds spent in a call. */
export interface CallTimes {
  /** From the request's arrival to the end of the response. */
  total: number;
  /** Building the pack and the upstream body (folding, page-in, assembly). */
  pack: number;
  /** Connecting upstream, and from sending the pack to the end of the upstream's answer. */
  upstream: number;
  /** Ending the call once the answer is over: this call's pages evicted, the turn recorded. */
  close: number;
  /** Everything else: `total - pack - upstream - close` (reading, parsing, locking, relaying). */
  overhead: number;
}

/**
 * One line of the proxy's log (`contextfold proxy --json` prints it as one JSON object). It
 * never holds a header value, a key or message text: only counts, ids and step numbers.
 */
export type ProxyLogLine =
  /** A model call that went through a session: its decisions and how it ended. */
  | ({
      kind: 'call';
      api: ApiKind;
      endpoint: Endpoint;
      session: string;
      status: number;
      outcome: CallOutcome;
      stream: boolean;
      ms: CallTimes;
      error?: string;
      /** Messages the proxy could not rebuild as the pack has them (their original was sent). */
      proxy_warnings?: string[];
    } & CallReport)
  /** A model call refused before any session was touched (bad input, unknown model, unreachable upstream). */
  | {
      kind: 'refused';
      api: ApiKind;
      endpoint: Endpoint;
      status: number;
      outcome: CallOutcome;
      error: string;
      ms: number;
    }
  /** Any other request, forwarded untouched. */
  | {
      kind: 'passthrough';
      method: string;
      path: string;
      status: number;
      outcome: CallOutcome;
      ms: number;
    };

function list(steps: number[]): string {
  return steps.length > 8 ? `${steps.slice(0, 8).join(',')},… (${steps.length})` : steps.join(',');
}

/**
 * The human form of a log line (one line).
 *
 * @example
 * humanLogLine(line); // 'messages auto-3f2a… turn 12: 104473 → 15872 tokens (saved 88601) · paged 40 · 200 in 812 ms'
 */
export function humanLogLine(l: ProxyLogLine): string {
  if (l.kind === 'passthrough') {
    return `${l.method} ${l.path} → ${l.status} (${l.outcome}) in ${l.ms} ms`;
  }
  if (l.kind === 'refused') return `${l.endpoint} refused ${l.status} (${l.outcome}): ${l.error}`;
  const parts = [
    `${l.endpoint} ${l.session} turn ${l.turn}: ${l.history_tokens} → ${l.pack_tokens} tokens (saved ${l.history_tokens - l.pack_tokens})`,
  ];
  if (l.paged_in.length > 0) parts.push(`paged ${list(l.paged_in)}`);
  if (l.folded.length > 0) parts.push(`folded ${list(l.folded)}`);
  parts.push(`${l.status} ${l.outcome} in ${l.ms.total} ms`);
  const line = parts.join(' · ');
  // The warnings too (a page refused as tampered, a live turn excerpted, a pack over budget):
  // the default output is the only report a user may read.
  const warnings = [...l.warnings, ...(l.proxy_warnings ?? [])].map(
    (w) => ` · warning: ${w.replace(/\s*[\r\n]+\s*/g, ' ')}`,
  );
  return `${l.error ? `${line}: ${l.error}` : line}${warnings.join('')}`;
}
