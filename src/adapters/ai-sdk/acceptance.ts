/**
 * What the AI SDK middleware declares to the adapter acceptance suite (conformance/adapters).
 * It rebuilds every call's prompt from a `Session`, so it evicts (CONF-07) like the harness.
 * `SEC-SCRUB` is declared as the specification requires it; the session redacts through
 * the guard before anything is recorded.
 */
export const AI_SDK_ACCEPTANCE = {
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
  source: 'AI_SDK_ACCEPTANCE in src/adapters/ai-sdk/acceptance.ts',
} as const;
