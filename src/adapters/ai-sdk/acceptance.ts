import { SESSION_ACCEPTANCE } from '../../harness/acceptance.js';

/**
 * What the AI SDK middleware declares to the adapter acceptance suite (conformance/adapters).
 * It rebuilds every call's prompt from a `Session`, so it declares exactly the session's set
 * (it evicts, CONF-07, like the harness).
 * `SEC-SCRUB` is declared as the specification requires it; the session redacts through
 * the guard before anything is recorded.
 */
export const AI_SDK_ACCEPTANCE = {
  requirements: SESSION_ACCEPTANCE.requirements,
  source: 'AI_SDK_ACCEPTANCE in src/adapters/ai-sdk/acceptance.ts',
} as const;
