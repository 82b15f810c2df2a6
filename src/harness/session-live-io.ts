// The live side of a session (`SessionIO` over the engine): summarising, folding, paging in
// within the room the budget leaves, and evicting. Replay has its own side (`replay.ts`); the
// turn lifecycle both drive is `SessionCore`.
import type { ContextFoldEngine } from '../engine/types.js';
import { sha256Hex } from '../protocol/canonical-json.js';
import { UsageError } from '../protocol/errors.js';
import type { PageInFailure } from '../protocol/results.js';
import type { ArchivedBlockInfo } from './archived-block.js';
import type { FoldRef } from './folded-step.js';
import { toPlainMessage } from './messages.js';
import { pageTokens } from './pack.js';
import type { FoldRequest, PagedIn, SessionIO } from './session-core.js';
import { defaultSummary, type Summarizer } from './session-options.js';
import { describeTurn, wellFormed } from './summarize.js';
import type { TokenMeter } from './token-meter.js';
import type { Turn } from './turns.js';

/**
 * Keeps the pages (in the engine's order) whose blocks fit in `room` tokens; the others are
 * refused, reported like any page that could not be paged in. L3 and L0 are never dropped, so
 * a page that does not fit beside them would put the pack over its budget.
 */
function fitPages<P extends ArchivedBlockInfo>(
  pages: readonly P[],
  room: number,
  meter: TokenMeter,
): { pages: P[]; refused: PageInFailure[] } {
  const kept: P[] = [];
  const refused: PageInFailure[] = [];
  let left = room;
  for (const p of pages) {
    const n = pageTokens(meter, p);
    if (n <= left) {
      kept.push(p);
      left -= n;
    } else {
      refused.push({
        step_id: p.step_id,
        code: 'PAGE_BUDGET',
        error: 'PageBudgetExceeded',
        message: `its ${n}-token block does not fit: ${Math.max(0, left)} token(s) of the budget are left beside the live turn and pinned layer`,
      });
    }
  }
  return { pages: kept, refused };
}

/** The live side of a session: the engine. */
export class LiveIO implements SessionIO {
  constructor(
    private readonly engine: ContextFoldEngine,
    private readonly summarizer: Summarizer | undefined,
    private readonly meter: TokenMeter,
  ) {}

  async summarize(
    turn: Turn,
    payload: string,
  ): Promise<{ summary: string; source: 'default' | 'custom' }> {
    if (!this.summarizer) return { summary: defaultSummary(turn), source: 'default' };
    const messages = turn.messages.map(toPlainMessage);
    const out = await this.summarizer({
      stepId: turn.stepId,
      steps: [...turn.steps],
      messages,
      payload,
      facts: describeTurn(messages),
    });
    if (typeof out !== 'string') {
      throw new UsageError(
        `the custom summariser returned ${out === null ? 'null' : typeof out} for step ${turn.stepId}; it must return a string`,
      );
    }
    // The record keeps the summary with whitespace runs collapsed: nothing else would be left.
    if (out.replace(/\s+/g, '') === '') {
      throw new UsageError(
        `the custom summariser returned an empty summary for step ${turn.stepId} (${out === '' ? 'an empty string' : 'only whitespace'}); it must describe the turn (or leave out summarize to use the built-in one)`,
      );
    }
    // The summary goes into the fold event's record: redact it like any other recorded text
    // (well-formed first: the redactor cannot scan half an emoji, and skips such a text whole).
    const text = wellFormed(out);
    const summary = this.engine.redact ? await this.engine.redactText(text) : text;
    return { summary, source: 'custom' };
  }

  /**
   * Folds the turns. A turn the store already holds with exactly these payload bytes (archived
   * by an import or the Claude Code hook, whose summary may differ) is adopted as it is: a
   * refold never overwrites. Another payload under the same step is refused by the engine
   * (`StepConflictError`).
   */
  async fold(requests: FoldRequest[]): Promise<FoldRef[]> {
    const archived = await Promise.all(requests.map((r) => this.archived(r)));
    const todo = requests.filter((_, i) => archived[i] === null);
    const results =
      todo.length === 0
        ? []
        : await this.engine.foldMany(
            todo.map((r) => ({ stepId: r.turn.stepId, summary: r.summary, content: r.payload })),
          );
    let k = 0;
    return archived.map((a) => {
      if (a !== null) return a;
      const r = results[k++]!;
      return { step_id: r.step_id, file_path: r.file_path, payload_sha256: r.payload_sha256 };
    });
  }

  /** The store's node of this turn when it holds the same payload bytes, else null. */
  private async archived(r: FoldRequest): Promise<FoldRef | null> {
    const entry = await this.engine.entry(r.turn.stepId);
    if (!entry) return null;
    const text = this.engine.redact ? await this.engine.redactText(r.payload) : r.payload;
    if (sha256Hex(text) !== entry.payload_sha256) return null;
    return {
      step_id: entry.step_id,
      file_path: entry.file_path,
      payload_sha256: entry.payload_sha256,
    };
  }

  async pageIn(
    prompt: string,
    _turn: number,
    room: number,
  ): Promise<{ pages: PagedIn[]; failures: PageInFailure[] }> {
    const r = await this.engine.pageIn(prompt);
    const caps = new Map(r.scan.selected.map((p) => [p.step_id, p.cost]));
    const fitted = fitPages(r.pages, room, this.meter);
    return {
      pages: fitted.pages.map((p) => ({
        step_id: p.step_id,
        payload_sha256: p.payload_sha256,
        chunk: p.chunk,
        chunks: p.chunks,
        truncated: p.truncated,
        content: p.content,
        matched_terms: [...p.matched_terms],
        cap: caps.get(p.step_id) ?? this.engine.policy.max_rehydration_tokens_per_call,
        ...(p.window ? { window: { ...p.window } } : {}),
        tokens: p.tokens,
        content_sha256: sha256Hex(p.content),
        findings: p.findings,
      })),
      failures: [...r.failures.map((f) => ({ ...f })), ...fitted.refused],
    };
  }

  async evict(stepId: number): Promise<void> {
    await this.engine.evict(stepId);
  }
}
