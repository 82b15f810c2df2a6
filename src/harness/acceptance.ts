/**
 * The requirements an adapter that cannot evict declares (the MCP server, the Claude Code
 * hook): text it adds stays in a host's context that it does not own, so CONF-07 is outside
 * its set and those cases are not-applicable (never pass); everything else as `Session`.
 */
export const NON_EVICTING_REQUIREMENTS = [
  'CONF-04',
  'CONF-05',
  'CONF-06',
  'CONF-09',
  'CONF-10',
  'CONF-12',
  'CONF-13',
  'SEC-SCRUB',
] as const;

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
