/** A request body rebuilt from a pack for the upstream API. */
export interface UpstreamBody {
  body: Record<string, unknown>;
  /**
   * True when the pack sends the client's request as it came (nothing folded, nothing paged
   * in, nothing compressed): the proxy then forwards the client's bytes.
   */
  unchanged: boolean;
  /** Messages the proxy could not rebuild as the pack has them (their original was sent). */
  warnings: string[];
}

/** Text shown instead of nothing when a pack's history would start with an assistant turn. */
export const FOLDED_START_NOTE =
  '[contextfold: the start of this conversation is folded; see the folded-step records in the system prompt]';

/** {@link FOLDED_START_NOTE} when the pack carries no folded-step records (they were left out). */
export const FOLDED_START_NOTE_NO_RECORDS =
  '[contextfold: the start of this conversation is folded; it stays archived, and a prompt that asks for it gets it back]';
