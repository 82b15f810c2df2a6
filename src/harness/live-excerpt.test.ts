import { describe, expect, it } from 'vitest';
import { o200kTokenizer } from '../extract/tokenizer.js';
import type { HistoryMessage, Message } from './messages.js';
import { type AssembleInput, assemblePack, renderPackText } from './pack.js';
import { TokenMeter } from './token-meter.js';
import { groupTurns } from './turns.js';

const tok = o200kTokenizer();
const meter = new TokenMeter(tok);
const T = '2025-01-01T00:00:00Z';
const BUDGET = 1200;

/** A build log of `lines` numbered lines with distinct first and last lines. */
function buildLog(lines: number, word = 'compiling'): string {
  const out = ['HEAD-FIRST-LINE $ npm run build'];
  for (let i = 1; i < lines - 1; i++)
    out.push(`[${i}] ${word} src/module_${i}.ts ok (${i * 7} ms)`);
  out.push('TAIL-LAST-LINE error TS2345: build failed');
  return out.join('\n');
}

function turnsOf(msgs: Message[]) {
  return groupTurns(msgs.map((m, i) => ({ ...m, stepId: i, timestamp: T }) as HistoryMessage));
}

function input(msgs: Message[], over: Partial<AssembleInput> = {}): AssembleInput {
  const turns = turnsOf(msgs);
  const current = turns[turns.length - 1]!;
  return {
    turn: 3,
    stepId: msgs.length,
    budget: BUDGET,
    meter,
    pinned: [{ kind: 'system', id: 100, message: { role: 'system', content: 'You are careful.' } }],
    records: [],
    recent: turns.slice(0, -1),
    current,
    currentIsPrompt: current.kind === 'user',
    pages: [],
    pageFailures: [],
    folded: [],
    ...over,
  };
}

const toolLoop = (output: string): Message[] => [
  { role: 'user', content: 'Build it' },
  {
    role: 'assistant',
    content: 'Running the build.',
    toolCalls: [{ id: 'c1', name: 'bash', input: { command: 'npm run build' } }],
  },
  { role: 'tool', toolCallId: 'c1', toolName: 'bash', exitCode: 1, content: output },
];

describe('a live turn larger than the budget', () => {
  const log = buildLog(700);

  it('is sent as head and tail with a marker line, and the pack fits the budget', () => {
    expect(tok.count(log)).toBeGreaterThan(3 * BUDGET);
    const pack = assemblePack(input(toolLoop(log)));
    expect(pack.tokens).toBeLessThanOrEqual(BUDGET);
    expect(pack.tokens).toBe(tok.count(renderPackText(pack)));
    expect(pack.metadata.over_budget).toBe(false);
    const [note] = pack.metadata.live_excerpts;
    expect(pack.metadata.live_excerpts).toHaveLength(1);
    expect(note).toMatchObject({
      step_id: 2,
      role: 'tool',
      tokens: meter.message({ ...toolLoop(log)[2]! }),
    });
    const sent = pack.messages.at(-1)!;
    // The call and its result stay paired, with their ids and headers.
    expect(pack.messages.at(-2)).toMatchObject({ role: 'assistant', toolCalls: [{ id: 'c1' }] });
    expect(sent).toMatchObject({ role: 'tool', toolCallId: 'c1', toolName: 'bash', exitCode: 1 });
    const head = log.slice(0, note!.head_chars);
    const tail = log.slice(log.length - note!.tail_chars);
    expect(head.startsWith('HEAD-FIRST-LINE')).toBe(true);
    expect(tail.endsWith('TAIL-LAST-LINE error TS2345: build failed')).toBe(true);
    expect(head.endsWith('\n')).toBe(true);
    expect(note!.head_chars + note!.tail_chars).toBeLessThan(log.length / 2);
    const marker = `[contextfold: ${note!.left_out_tokens} tokens of this output left out of this call to fit the ${BUDGET}-token budget; the whole output is kept in the session (step 2)]`;
    expect(sent.content).toBe(`${head}${marker}\n${tail}`);
    expect(note!.left_out_tokens).toBeGreaterThan(2 * BUDGET);
    expect(note!.sent_tokens).toBe(meter.message(sent));
    expect(pack.metadata.warnings).toEqual([
      expect.stringMatching(
        /^live turn of \d+ tokens does not fit the 1200-token budget beside the pinned layer: step 2 sent as head and tail/,
      ),
    ]);
    // The rest of the budget went first: the earlier turn is left out of this pack.
    expect(pack.metadata.l1_steps).toEqual([]);
    expect(pack.entries.find((e) => e.layer === 'L0')!.tokens).toBe(
      pack.messages.slice(-2).reduce((n, m) => n + meter.message(m), 0),
    );
  });

  it("'send-whole' keeps the old behaviour: the whole output, over budget", () => {
    const pack = assemblePack(input(toolLoop(log), { liveOverflow: 'send-whole' }));
    expect(pack.metadata.live_excerpts).toEqual([]);
    expect(pack.messages.at(-1)!.content).toBe(log);
    expect(pack.metadata.over_budget).toBe(true);
  });

  it('shares the room between several oversized outputs, and leaves small ones whole', () => {
    const msgs: Message[] = [
      { role: 'user', content: 'Build both' },
      {
        role: 'assistant',
        content: '',
        toolCalls: [
          { id: 'a', name: 'bash', input: { command: 'make a' } },
          { id: 'b', name: 'bash', input: { command: 'make b' } },
          { id: 'c', name: 'bash', input: { command: 'pwd' } },
        ],
      },
      { role: 'tool', toolCallId: 'a', content: buildLog(300, 'linking') },
      { role: 'tool', toolCallId: 'b', content: buildLog(500) },
      { role: 'tool', toolCallId: 'c', content: '/work/repo' },
    ];
    const pack = assemblePack(input(msgs));
    expect(pack.tokens).toBeLessThanOrEqual(BUDGET);
    expect(pack.metadata.live_excerpts.map((n) => n.step_id)).toEqual([2, 3]);
    expect(pack.messages.at(-1)!.content).toBe('/work/repo');
    const [a, b] = pack.metadata.live_excerpts;
    expect(Math.abs(a!.sent_tokens - b!.sent_tokens)).toBeLessThan(40);
  });

  it('cuts the user prompt when it alone is too large, never inside a surrogate pair', () => {
    const prompt = `Please review:\n${'🙂 emoji line é with text\n'.repeat(900)}END-OF-PROMPT`;
    const pack = assemblePack(input([{ role: 'user', content: prompt }]));
    expect(pack.tokens).toBeLessThanOrEqual(BUDGET);
    const sent = pack.messages.at(-1)!.content;
    expect(Buffer.from(sent, 'utf8').toString('utf8')).toBe(sent);
    expect(sent).toMatch(
      /\[contextfold: \d+ tokens of this message left out of this call to fit the 1200-token budget; the whole message is kept in the session \(step 0\)\]/,
    );
    expect(sent.startsWith('Please review:\n')).toBe(true);
    expect(sent.endsWith('END-OF-PROMPT')).toBe(true);
    expect(pack.metadata.live_excerpts[0]).toMatchObject({ step_id: 0, role: 'user' });
  });

  it('a single line without newlines is cut by tokens', () => {
    const blob = JSON.stringify(Array.from({ length: 3000 }, (_, i) => ({ id: i, v: `x${i}` })));
    const pack = assemblePack(input(toolLoop(blob)));
    expect(pack.tokens).toBeLessThanOrEqual(BUDGET);
    const note = pack.metadata.live_excerpts[0]!;
    expect(note.head_chars).toBeGreaterThan(100);
    expect(note.tail_chars).toBeGreaterThan(100);
    expect(pack.messages.at(-1)!.content.endsWith(blob.slice(-note.tail_chars))).toBe(true);
  });

  it('stays over budget, with both warnings, when even the marker alone does not fit', () => {
    const pack = assemblePack(input(toolLoop(log), { budget: 40 }));
    expect(pack.metadata.over_budget).toBe(true);
    expect(pack.metadata.warnings.at(-1)).toMatch(/over the 40-token budget/);
    expect(pack.messages.at(-1)!.content.length).toBeLessThan(400);
  });

  it('sends a message whole when the marker alone is larger than it (never a bigger, empty cut)', () => {
    const prompt = 'Which port is PostgreSQL listening on in the compose file?';
    const pack = assemblePack(input([{ role: 'user', content: prompt }], { budget: 12 }));
    expect(pack.messages.at(-1)!.content).toBe(prompt);
    expect(pack.metadata.live_excerpts).toEqual([]);
    expect(pack.metadata.over_budget).toBe(true);
  });

  it('is deterministic', () => {
    const a = assemblePack(input(toolLoop(log)));
    const b = assemblePack(input(toolLoop(log)));
    expect(renderPackText(a)).toBe(renderPackText(b));
    expect(a.metadata.live_excerpts).toEqual(b.metadata.live_excerpts);
  });
});
