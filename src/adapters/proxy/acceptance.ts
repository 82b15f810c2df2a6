import { SESSION_ACCEPTANCE } from '../../harness/acceptance.js';

/**
 * What the proxy declares to the adapter acceptance suite (conformance/adapters). It owns every
 * request it sends upstream and rebuilds each one from the client's history, so it evicts
 * (CONF-07): the next call is built again, without the previous call's pages. It reports a
 * refused page in the call's log line (`warnings`). `SEC-SCRUB` is declared as the
 * specification requires it; the proxy's sessions redact through the guard. Every call runs
 * through a `Session`, so the set is exactly the session's.
 */
export const PROXY_ACCEPTANCE = {
  requirements: SESSION_ACCEPTANCE.requirements,
  source: 'PROXY_ACCEPTANCE in src/adapters/proxy/acceptance.ts',
} as const;
