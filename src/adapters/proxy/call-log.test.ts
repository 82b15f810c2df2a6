import { describe, expect, it } from 'vitest';
import { humanLogLine, type ProxyLogLine } from './call-log.js';

const call = (over: Partial<Extract<ProxyLogLine, { kind: 'call' }>> = {}): ProxyLogLine => ({
  kind: 'call',
  api: 'anthropic',
  endpoint: 'messages',
  session: 's1',
  status: 200,
  outcome: 'ok',
  stream: false,
  ms: { total: 12, pack: 5, upstream: 4, close: 2, overhead: 1 },
  turn: 4,
  step_id: 8,
  history_messages: 9,
  history_tokens: 5000,
  pack_tokens: 1500,
  baseline_tokens: 5000,
  live_tokens: 300,
  budget: 1500,
  folded: [],
  paged_in: [3],
  excerpted: [],
  evicted: [],
  warnings: [],
  ...over,
});

describe('humanLogLine', () => {
  it('one line with the call decisions', () => {
    expect(humanLogLine(call())).toBe(
      'messages s1 turn 4: 5000 → 1500 tokens (saved 3500) · paged 3 · 200 ok in 12 ms',
    );
  });

  it("carries the call's warnings: a tampered page refused is not left to --json alone", () => {
    // Before, the human line (the default output) left the warnings out: a page-in refused as
    // tampered, a live turn excerpted or a pack over budget showed only with --json.
    const refused =
      'page-in of step 1 refused (IntegrityCheckError: step 1: artifact_sha256 does not match the file content (tampered): /s/cold_nodes/step_000001.json); the turn proceeds without it';
    const line = humanLogLine(
      call({
        paged_in: [],
        warnings: [refused],
        proxy_warnings: ['message 2 sent as the client wrote it'],
      }),
    );
    expect(line.split('\n')).toHaveLength(1);
    expect(line).toBe(
      `messages s1 turn 4: 5000 → 1500 tokens (saved 3500) · 200 ok in 12 ms · warning: ${refused} · warning: message 2 sent as the client wrote it`,
    );
  });
});
