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

/**
 * Builds the folded-step record (the hot projection) that replaces a folded turn in the prompt.
 * Everything in it comes from the history and the fold, never from a clock: `timestamp` is the
 * time of the turn's first message, so the record is identical on replay. Under the
 * `positions` rule (sessions recorded before the rule was unified) a turn of several messages
 * also names its last message's position (`artifacts.last_step_id`); under `turns` step ids
 * number turns, not messages, and there is no such field.
 *
 * @example
 * buildFoldedStep(turn, 'assistant: ran the tests | exit 1', { step_id: 12, file_path: '.contextfold/cold_nodes/step_000012.json', payload_sha256: '…' });
 */
export function buildFoldedStep(
  turn: Turn,
  summary: string,
  ref: FoldRef,
  stepIds: TurnStepIds = 'turns',
): FoldedStep {
  const facts = describeTurn(turn.messages.map(toPlainMessage));
  const first = turn.messages[0];
  const record: FoldedStep = {
    step_id: turn.stepId,
    timestamp: first?.timestamp ?? '1970-01-01T00:00:00Z',
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
  if (facts.target_files.length > 0) record.target_files = facts.target_files.slice(0, 12);
  return record;
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
