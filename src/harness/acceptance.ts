/**
 * What `Session` declares to the adapter acceptance suite (conformance/adapters): the
 * requirements it implements. It owns the prompt, so it evicts (CONF-07) and never has a record
 * in a host's context. `SEC-SCRUB` (secret scrubbing before writes, RFC-IPCF-001 §Security) is
 * declared because the specification requires it of production implementations: until the
 * guard lands, the cases that check it fail, visibly.
 */
export const SESSION_ACCEPTANCE = {
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
  source: 'SESSION_ACCEPTANCE in src/harness/acceptance.ts',
} as const;
