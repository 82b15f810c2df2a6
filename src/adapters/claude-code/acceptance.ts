import { NON_EVICTING_REQUIREMENTS } from '../../harness/acceptance.js';

/**
 * What the Claude Code hook declares to the adapter acceptance suite (conformance/adapters).
 *
 * - It cannot evict: text it adds stays in Claude Code's transcript, which Claude Code owns, so
 *   CONF-07 is outside its set and those cases are not-applicable (never pass).
 * - It is stricter by one named conjunct, `record_in_live_context`: a record still in Claude
 *   Code's live context (after the last compaction) is not paged in again (see
 *   `archivedContext`). The suite excuses it only on liveness cases that list it, where the
 *   case input has the record live, and only while the absence case (the same record,
 *   compacted) passes on the floor.
 * - `SEC-SCRUB` is declared as the specification requires it; the guard redacts the hook's
 *   store and rendered pages.
 */
export const CLAUDE_CODE_ACCEPTANCE = {
  requirements: NON_EVICTING_REQUIREMENTS,
  source: 'CLAUDE_CODE_ACCEPTANCE in src/adapters/claude-code/acceptance.ts',
  /** Stricter behaviours, each applied when its condition is on the input. */
  strictnesses: {
    record_in_live_context:
      'an archived record still in Claude Code’s live context (after the last compaction) is not paged in again',
  },
} as const;
