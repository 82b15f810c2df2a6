/**
 * What `Session` declares to the adapter acceptance suite (conformance/adapters): the
 * requirements it implements. It owns the prompt, so it evicts (CONF-07) and never has a record
 * in a host's context. `SEC-SCRUB` (secret scrubbing before writes, RFC-IPCF-001 §Security) is
 * declared because the specification requires it of production implementations; the guard
 * (`src/guard`) redacts before every write, and its cases pass.
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
