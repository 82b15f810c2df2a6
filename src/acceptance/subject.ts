import type { CaseInputDoc } from './case-schema.js';

/**
 * The prompt of the warm-up call every subject makes after feeding the history, so that each
 * integration has archived what it archives before the runner changes the store. It names
 * nothing archived; the runner checks that it paged nothing in.
 */
export const WARMUP_PROMPT = 'ok';

/** The model's answer to every call (a mock model; the content is irrelevant). */
export const MODEL_REPLY = 'Noted.';

/** What one model call of an integration produced, as the runner observes it. */
export interface CallObservation {
  /** The model was called: the integration let the turn go on. */
  proceeded: boolean;
  /** Everything the integration put before the model for this call, as text. */
  modelInput: string;
  /** Pages the integration refused for this call and reported, by step id of the session's store. */
  refused: { step_id: number; error: string }[];
  /** One line: why the call did not proceed, or what the integration reported as an error. */
  error?: string;
}

/** What {@link AdapterSubject.open} gets for one case. */
export interface SubjectCaseOptions {
  /** A fresh directory of this case; everything the integration writes goes below it. */
  workDir: string;
  input: CaseInputDoc;
}

/** One case's run of an integration: setup, calls, close. */
export interface SubjectCase {
  /** The store directory of a session (known before setup: the runner writes the policy there). */
  storeDir(session: string): string;
  /** Every directory the integration writes to (scanned for leaked text after the calls). */
  readonly writeRoots: readonly string[];
  /**
   * Feeds every session's history through the integration's public entry point and ends each
   * session with one warm-up call ({@link WARMUP_PROMPT}); returns the warm-up observations.
   */
  setup(): Promise<CallObservation[]>;
  /** One model call of a session with this prompt; the model answers {@link MODEL_REPLY}. */
  call(session: string, prompt: string): Promise<CallObservation>;
  close(): Promise<void>;
}

/**
 * An integration under test, driven through its real public entry point (a pure function of
 * one case input, in a fresh directory: no network, no keys). Adding an integration means
 * writing one of these; the runner, the scoring and the case file stay as they are.
 *
 * @example
 * const report = await runAdapterAcceptance({ subjects: [new SessionSubject()] });
 */
export interface AdapterSubject {
  /** Stable name, e.g. `claude-code-hook`. */
  readonly name: string;
  /** What is driven, in one line (the entry point a user runs). */
  readonly entryPoint: string;
  /**
   * What the integration declares: `requirements`, the requirement ids it implements (a case
   * needing another is not-applicable), and `source`, where that list is defined (ideally a
   * constant next to the integration's code, e.g. `MCP_ACCEPTANCE`).
   */
  readonly acceptance: { readonly requirements: readonly string[]; readonly source: string };
  /**
   * The stricter behaviours the integration applies to this input, as conjunct names (contract
   * 003: declarations are part of the result). Empty for an integration that is the floor.
   */
  declare(input: CaseInputDoc): string[];
  /** Null when the subject can run here, else one line saying what is missing. */
  unavailable(): Promise<string | null>;
  open(options: SubjectCaseOptions): Promise<SubjectCase>;
}
