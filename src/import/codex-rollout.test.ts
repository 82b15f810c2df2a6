import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { parseCodexRollout } from './codex-rollout.js';

/** A rollout as Codex CLI writes it (record layout of codex-rs `RolloutLine`). */
const lines = [
  {
    type: 'session_meta',
    payload: { id: '019a2d7a-41c4', cwd: '/home/me/billing', cli_version: '0.77.0' },
  },
  { type: 'turn_context', payload: { model: 'gpt-5.1-codex-max', effort: 'high' } },
  {
    type: 'response_item',
    payload: {
      type: 'message',
      role: 'user',
      content: [{ type: 'input_text', text: 'Run the billing tests.' }],
    },
  },
  { type: 'event_msg', payload: { type: 'user_message', message: 'Run the billing tests.' } },
  {
    type: 'response_item',
    payload: {
      type: 'reasoning',
      summary: [{ type: 'summary_text', text: '**Running the tests**' }],
      encrypted_content: 'gAAAA…',
    },
  },
  {
    type: 'response_item',
    payload: {
      type: 'function_call',
      name: 'shell',
      arguments: '{"command":["pytest","-q","billing"]}',
      call_id: 'call_1',
    },
  },
  {
    type: 'response_item',
    payload: {
      type: 'function_call_output',
      call_id: 'call_1',
      output: '{"output":"1 failed, 11 passed","metadata":{"exit_code":1}}',
    },
  },
  { type: 'response_item', payload: { type: 'ghost_snapshot', ghost_commit: { id: 'dac0' } } },
  {
    type: 'response_item',
    payload: {
      type: 'message',
      role: 'assistant',
      content: [{ type: 'output_text', text: 'One failure: the VAT rate for AT.' }],
    },
  },
  { type: 'compacted', payload: { message: 'Fixed the VAT rate; tests green.' } },
].map((r) => JSON.stringify({ timestamp: '2025-12-08T00:39:54.852Z', ...r }));

describe('parseCodexRollout', () => {
  const { turns, sessionId } = parseCodexRollout(`${lines.join('\n')}\n`, 'rollout.jsonl');

  it('takes the session id from session_meta and skips context and UI events', () => {
    expect(sessionId).toBe('019a2d7a-41c4');
    expect(turns.map((t) => [t.step_id, t.role])).toEqual([
      [0, 'user'],
      [1, 'assistant'],
      [2, 'assistant'],
      [3, 'user'],
    ]);
    expect(turns[0]!.content).toBe('Run the billing tests.');
  });

  it("makes one turn of a model response, with each call's output attached", () => {
    expect(turns[1]!.content).toBe(
      [
        '[thinking]',
        '**Running the tests**',
        '[tool_use: shell id=call_1]',
        '{"command":["pytest","-q","billing"]}',
        '[tool_result: shell id=call_1]',
        '{"output":"1 failed, 11 passed","metadata":{"exit_code":1}}',
      ].join('\n'),
    );
    // The output ended that response: the answer after it is the next turn.
    expect(turns[2]!.content).toBe('One failure: the VAT rate for AT.');
    expect(turns[3]!.content).toBe('[compact summary]\nFixed the VAT rate; tests green.');
  });

  it('reads the first rollouts, whose items were written bare', () => {
    const bare = [
      { id: 's0', timestamp: '2025-04-20T10:00:00Z', instructions: null },
      { type: 'message', role: 'user', content: [{ type: 'input_text', text: 'hi' }] },
      { type: 'message', role: 'assistant', content: [{ type: 'output_text', text: 'hello' }] },
    ].map((r) => JSON.stringify(r));
    const r = parseCodexRollout(bare.join('\n'), 'old.jsonl');
    expect(r.turns.map((t) => t.content)).toEqual(['hi', 'hello']);
    expect(r.sessionId).toBe('s0');
  });

  it('an image generation call is its revised prompt (the base64 image is not text)', () => {
    const image = (revised_prompt?: string) =>
      JSON.stringify({
        type: 'response_item',
        payload: {
          type: 'image_generation_call',
          id: 'ig_1',
          status: 'completed',
          ...(revised_prompt === undefined ? {} : { revised_prompt }),
          result: 'iVBORw0KGgo=',
        },
      });
    const r = parseCodexRollout([lines[0], image('a cat on a keyboard')].join('\n'), 'r.jsonl');
    expect(r.turns.at(-1)!.content).toBe('[image_generation]\na cat on a keyboard');
    const bare = parseCodexRollout([lines[0], image()].join('\n'), 'r.jsonl');
    expect(bare.turns.some((t) => t.content.includes('iVBOR'))).toBe(false);
  });

  it('keeps a local shell call that has neither call_id nor id (Codex allows it), unanswered', () => {
    const shell = {
      type: 'response_item',
      payload: {
        type: 'local_shell_call',
        status: 'completed',
        action: { type: 'exec', command: ['ls', '-la'] },
      },
    };
    const r = parseCodexRollout([lines[0], JSON.stringify(shell)].join('\n'), 'r.jsonl');
    const last = r.turns.at(-1)!;
    expect(last.role).toBe('assistant');
    expect(last.content).toContain('"ls","-la"');
  });

  it('counts the items of a type it does not read (left out, never silently)', () => {
    const item = (payload: object) => JSON.stringify({ type: 'response_item', payload });
    const r = parseCodexRollout(
      [
        lines[0],
        item({ type: 'tool_search_call', query: 'x' }),
        item({ type: 'tool_search_output', results: [] }),
        item({ type: 'tool_search_call', query: 'y' }),
        item({ type: 'ghost_snapshot', ghost_commit: { id: 'abc' } }),
      ].join('\n'),
      'r.jsonl',
    );
    expect(r.skipped).toEqual({ tool_search_call: 2, tool_search_output: 1 });
  });

  it('refuses a malformed record in one line naming the file and line', () => {
    const bad = [lines[0], '{"type": "response_item", "payload": {"type": "function_call"}}'];
    expect(() => parseCodexRollout(bad.join('\n'), 'r.jsonl')).toThrow(
      /^r\.jsonl:2: a tool call without "call_id"$/,
    );
    expect(() => parseCodexRollout('{"type": ', 'r.jsonl')).toThrow(/^r\.jsonl:1: not valid JSON/);
  });
});

/*
 * fixtures/codex-rollout.jsonl reproduces, record for record, the opening of a real rollout
 * written by Codex CLI 0.60.1 (gpt-5.1-codex-max, 2025-11-22), published as
 * github.com/pinouchon/rtchess dev_history/exported-session.jsonl (commit
 * b8d8edfa27b5f325c8e37ea6a27799488d135413): the same record types in the same order, the same
 * keys in the same order and the same kinds of values (`instructions: null`, `content: null`,
 * `info: null`, `images: []`, `arguments` as JSON text, a shell output as `Exit code: …` text).
 * That repository has no license, so the text, ids and paths are new; nothing that decides how a
 * record is read was left out.
 */
describe('parseCodexRollout on a rollout in the shapes Codex CLI wrote', () => {
  const text = readFileSync(new URL('./fixtures/codex-rollout.jsonl', import.meta.url), 'utf8');
  const { turns, sessionId } = parseCodexRollout(text, 'rollout.jsonl');

  it('reads every record: the injected context and the prompt, then one turn per response', () => {
    expect(sessionId).toBe('019ab5c2-3d41-7e08-9c5a-2f61d7a0b3e4');
    expect(turns.map((t) => t.role)).toEqual([
      'user',
      'user',
      'assistant',
      'assistant',
      'assistant',
    ]);
    expect(turns[0]!.content).toMatch(/^<environment_context>\n {2}<cwd>\/home\/dev\/tally<\/cwd>/);
    expect(turns[2]!.content).toBe(
      [
        '[thinking]',
        '**Inspecting the server layout**',
        '[tool_use: shell_command id=call_Q3f8LkV2mZp1Rt7Yx9Wb4Hs0]',
        '{"command":"ls","workdir":".","timeout_ms":120000}',
        '[tool_result: shell_command id=call_Q3f8LkV2mZp1Rt7Yx9Wb4Hs0]',
        'Exit code: 0\nWall time: 0 seconds\nOutput:\nREADME.md\npackage.json\nsrc\ntest\n',
      ].join('\n'),
    );
    expect(turns[3]!.content).toMatch(/^\[thinking\]\n\*\*Planning the health endpoint\*\*/);
    expect(turns[3]!.content).toMatch(
      /\[tool_result: update_plan id=call_N6dJ2uTq8aXc5Ve1Gk7Lr3Zy\]\nPlan updated$/,
    );
    expect(turns[4]!.content).toBe(
      'Plan recorded: route first, then the database check, then a test.',
    );
  });
});

/** One wrapped rollout line per record: `[type, payload]`. */
const rollout = (...records: [string, unknown][]): string =>
  records
    .map(([type, payload]) =>
      JSON.stringify({ timestamp: '2026-01-05T09:00:00.000Z', type, payload }),
    )
    .join('\n');
const item = (payload: unknown): [string, unknown] => ['response_item', payload];
const ask = item({ type: 'message', role: 'user', content: [{ type: 'input_text', text: 'go' }] });

// Shapes of openai/codex codex-rs/protocol/src/models.rs (`ResponseItem`, the output payload)
// and protocol.rs (`CompactedItem`), at commit 001cb8e233f250c7086c791c51390286c087faea.
describe('parseCodexRollout on the item shapes of the Codex source', () => {
  it("reads a tool's image output as its text and [image], never the inline image data", () => {
    const png =
      'data:image/png;base64,iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR4nGNg';
    const r = parseCodexRollout(
      rollout(
        ask,
        item({ type: 'function_call', name: 'screenshot', arguments: '{}', call_id: 'c1' }),
        item({
          type: 'function_call_output',
          call_id: 'c1',
          output: [
            { type: 'input_text', text: 'login page' },
            { type: 'input_image', image_url: png },
          ],
        }),
        item({
          type: 'custom_tool_call',
          call_id: 'c2',
          name: 'apply_patch',
          input: '*** Begin Patch',
        }),
        item({
          type: 'custom_tool_call_output',
          call_id: 'c2',
          output: [{ type: 'input_text', text: 'Done!' }],
        }),
      ),
      'r.jsonl',
    );
    expect(r.turns[1]!.content).toBe(
      '[tool_use: screenshot id=c1]\n{}\n[tool_result: screenshot id=c1]\nlogin page\n[image]',
    );
    expect(r.turns[2]!.content).toMatch(/\[tool_result: apply_patch id=c2\]\nDone!$/);
    expect(r.turns.map((t) => t.content).join('\n')).not.toContain('base64');
  });

  it('keeps the raw reasoning an open-weight model writes in "content"', () => {
    const r = parseCodexRollout(
      rollout(
        ask,
        item({
          type: 'reasoning',
          summary: [],
          content: [{ type: 'reasoning_text', text: 'The tests live under test/.' }],
          encrypted_content: null,
        }),
        item({ type: 'reasoning', summary: [], content: null, encrypted_content: 'gAAAA…' }),
      ),
      'r.jsonl',
    );
    expect(r.turns.map((t) => t.content)).toEqual([
      'go',
      '[thinking]\nThe tests live under test/.',
    ]);
  });

  it('keeps what a web search looked for', () => {
    const action = { type: 'search', query: 'postgres 17 release notes' };
    const r = parseCodexRollout(
      rollout(
        ask,
        item({ type: 'web_search_call', status: 'completed', action }),
        item({ type: 'web_search_call', status: 'in_progress' }),
        item({
          type: 'message',
          role: 'assistant',
          content: [{ type: 'output_text', text: 'Found it.' }],
        }),
      ),
      'r.jsonl',
    );
    expect(r.turns[1]!.content).toBe(`[web_search]\n${JSON.stringify(action)}\nFound it.`);
  });

  it('makes no turn of a remote compaction, whose summary is encrypted', () => {
    const r = parseCodexRollout(
      rollout(
        ask,
        [
          'compacted',
          {
            message: '',
            replacement_history: [
              { type: 'message', role: 'user', content: [{ type: 'input_text', text: 'go' }] },
              { type: 'compaction', encrypted_content: 'gAAAA…' },
            ],
          },
        ],
        item({ type: 'compaction', encrypted_content: 'gAAAA…' }),
        ['compacted', { message: 'Summary: went.' }],
      ),
      'r.jsonl',
    );
    expect(r.turns.map((t) => t.content)).toEqual(['go', '[compact summary]\nSummary: went.']);
  });

  it('skips record and item types it does not know (newer Codex versions add some)', () => {
    const r = parseCodexRollout(
      rollout(
        ['world_state', { full: true }],
        ask,
        item({ type: 'image_generation_call', status: 'completed', result: 'iVBORw0K' }),
        ['token_usage_record', { usage: {} }],
      ),
      'r.jsonl',
    );
    expect(r.turns.map((t) => t.content)).toEqual(['go']);
  });
});
