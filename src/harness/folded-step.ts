import { canonicalJson } from '../protocol/canonical-json.js';
import type { FoldedStep } from '../protocol/types.js';
import { toPlainMessage } from './messages.js';
import { describeTurn, MAX_SUMMARY_CHARS, wellFormed } from './summarize.js';
import type { Turn, TurnStepIds } from './turns.js';

/** What a fold produced for one turn: where its cold node is and which payload it holds. */
export interface FoldRef {
  step_id: number;
  file_path: string;
  payload_sha256: string;
}

function cutCodePoints(text: string, max: number): string {
  const cps = Array.from(text);
  return cps.length <= max ? text : `${cps.slice(0, max - 1).join('')}…`;
}

/** Most `target_files` a record names; the rest are counted in `target_files_omitted`. */
export const MAX_TARGET_FILES = 12;
/** Longest `target_files` entry, in code points: a longer path keeps its end after `…`. */
export const MAX_TARGET_FILE_CHARS = 160;

/** A path cut to its last code points (the file name is at the end), marked with `…`. */
function cutPathStart(path: string, max: number): string {
  const cps = Array.from(path);
  return cps.length <= max ? path : `…${cps.slice(cps.length - (max - 1)).join('')}`;
}

/**
 * The turn's timestamp, with the fraction of its second cut to nine digits (nanoseconds) when
 * `bounded`: RFC 3339 allows any number of digits, and the record is in every prompt.
 */
function recordTimestamp(ts: string, bounded: boolean): string {
  if (!bounded) return ts;
  return ts.replace(/(\.\d{9})\d+/, '$1');
}

/**
 * `target_files` bounded in count and length (`bounded`), and how many files were left out:
 * every field of a record is bounded, so nothing unbounded enters the prompt. Unbounded (logs
 * recorded before the rule): the first twelve, whole, and the rest left out without a count.
 */
function targetFiles(files: readonly string[], bounded: boolean): Partial<FoldedStep> {
  if (files.length === 0) return {};
  if (!bounded) return { target_files: files.slice(0, MAX_TARGET_FILES) };
  const cut = [...new Set(files.map((f) => cutPathStart(f, MAX_TARGET_FILE_CHARS)))];
  const kept = cut.slice(0, MAX_TARGET_FILES);
  const omitted = files.length - kept.length;
  return { target_files: kept, ...(omitted > 0 ? { target_files_omitted: omitted } : {}) };
}

/**
 * Builds the folded-step record (the hot projection) that replaces a folded turn in the prompt.
 * Everything in it comes from the history and the fold, never from a clock: `timestamp` is the
 * time of the turn's first message, so the record is identical on replay. Under the
 * `positions` rule (sessions recorded before the rule was unified) a turn of several messages
 * also names its last message's position (`artifacts.last_step_id`); under `turns` step ids
 * number turns, not messages, and there is no such field. Every field is bounded: `summary`
 * at 280 code points (cut with `…`), `target_files` at {@link MAX_TARGET_FILES} entries of
 * {@link MAX_TARGET_FILE_CHARS} code points (a longer path keeps its end after `…`; files left
 * out are counted in `target_files_omitted`), `timestamp` at nine digits of a second's
 * fraction; `bounded: false` is the rule of sessions recorded
 * before (`SessionConfig.record_fields`).
 *
 * @example
 * buildFoldedStep(turn, 'assistant: ran the tests | exit 1', { step_id: 12, file_path: '.contextfold/cold_nodes/step_000012.json', payload_sha256: '…' });
 */
export function buildFoldedStep(
  turn: Turn,
  summary: string,
  ref: FoldRef,
  stepIds: TurnStepIds = 'turns',
  bounded = true,
): FoldedStep {
  const facts = describeTurn(turn.messages.map(toPlainMessage));
  const first = turn.messages[0];
  const record: FoldedStep = {
    step_id: turn.stepId,
    timestamp: recordTimestamp(first?.timestamp ?? '1970-01-01T00:00:00Z', bounded),
    summary: cutCodePoints(wellFormed(summary).replace(/\s+/g, ' ').trim(), MAX_SUMMARY_CHARS),
    status: facts.status,
    action_type: facts.action_type,
    artifacts: {
      cold_node_ref: ref.file_path,
      ...(stepIds === 'positions' && turn.steps.length > 1
        ? { last_step_id: turn.steps[turn.steps.length - 1] }
        : {}),
    },
  };
  return { ...record, ...targetFiles(facts.target_files, bounded) };
}

/**
 * The prompt form of a record: one line of canonical JSON (keys sorted, no whitespace), so the
 * same record always renders to the same bytes.
 *
 * @example
 * renderFoldedStep(record); // '{"action_type":"VERIFICATION","artifacts":{…},"status":"FAILED",…}'
 */
export function renderFoldedStep(record: FoldedStep): string {
  return canonicalJson(record);
}
