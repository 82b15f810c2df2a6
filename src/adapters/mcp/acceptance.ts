import { NON_EVICTING_REQUIREMENTS } from '../../harness/acceptance.js';

/**
 * What the MCP server declares to the adapter acceptance suite (conformance/adapters). Tool
 * results stay in the host's context, which the server does not own: it cannot evict, so
 * CONF-07 is outside its set and those cases are not-applicable (never pass). It pages in what
 * `scan_prompt` selects, verified and bounded. `SEC-SCRUB` is declared as the specification
 * requires it; the engine redacts through the guard.
 */
export const MCP_ACCEPTANCE = {
  requirements: NON_EVICTING_REQUIREMENTS,
  source: 'MCP_ACCEPTANCE in src/adapters/mcp/acceptance.ts',
} as const;
