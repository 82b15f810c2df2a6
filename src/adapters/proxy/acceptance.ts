/**
 * What the proxy declares to the adapter acceptance suite (conformance/adapters). It owns every
 * request it sends upstream and rebuilds each one from the client's history, so it evicts
 * (CONF-07): the next call is built again, without the previous call's pages. It reports a
 * refused page in the call's log line (`warnings`). `SEC-SCRUB` is declared as the
 * specification requires it; the proxy's sessions redact through the guard.
 */
export const PROXY_ACCEPTANCE = {
  requirements: [
    'CONF-04',
    'CONF-05',
    'CONF-06',
    'CONF-07',
    'CONF-09',
    'CONF-10',
    'CONF-12',
    'CONF-13',
    'SEC-SCRUB',
  ],
  source: 'PROXY_ACCEPTANCE in src/adapters/proxy/acceptance.ts',
} as const;
