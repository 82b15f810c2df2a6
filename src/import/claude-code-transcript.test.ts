import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { formatArchivedBlock } from '../harness/archived-block.js';
import { isUsageError } from '../protocol/errors.js';
import {
  COMPACT_SUMMARY_LABEL,
  parseClaudeCodeTranscript,
  TranscriptReader,
} from './claude-code-transcript.js';
import type { ImportedTurn } from './turn.js';

const fixture = (name: string) =>
  readFileSync(new URL(`./fixtures/${name}`, import.meta.url), 'utf8');
const session = fixture('claude-code-session.jsonl');

function thrown(fn: () => unknown): Error {
  try {
    fn();
  } catch (e) {
    return e as Error;
  }
  throw new Error('expected an error');
}

describe('parseClaudeCodeTranscript', () => {
  const parsed = parseClaudeCodeTranscript(session, 'session.jsonl');

  it('turns conversation rows into turns numbered by position', () => {
    expect(parsed.turns.map((t) => [t.step_id, t.role])).toEqual([
      [0, 'user'],
      [1, 'assistant'],
      [2, 'assistant'],
      [3, 'user'],
      [4, 'user'],
      [5, 'assistant'],
    ]);
    expect(parsed.turns[0]!.content).toBe(
      'Set PostgreSQL to port 5433 in config/database.yml and run the migrations.',
    );
  });

  it('joins the rows of one API message and attaches each tool result to its call', () => {
    expect(parsed.turns[1]!.content).toBe(
      [
        '[thinking]',
        'The config lives in config/database.yml; edit it, then migrate.',
        '[tool_use: Edit id=toolu_01EDIT]',
        '{',
        ' "file_path": "/home/dev/billing/config/database.yml",',
        ' "old_string": "port: 5432",',
        ' "new_string": "port: 5433"',
        '}',
        '[tool_result: Edit id=toolu_01EDIT]',
        'The file /home/dev/billing/config/database.yml has been updated.',
        '[tool_use: Bash id=toolu_01MIGRATE]',
        '{',
        ' "command": "mix ecto.migrate",',
        ' "description": "Run the migrations"',
        '}',
        '[tool_result: Bash id=toolu_01MIGRATE error]',
        '** (Postgrex.Error) FATAL 28P01 (invalid_password) password authentication failed for user "billing"',
      ].join('\n'),
    );
  });

  it('reads a repeated uuid once and skips sub-agent, meta and non-conversation rows', () => {
    const all = parsed.turns.map((t) => t.content).join('\n');
    expect(all.match(/password authentication failed/g)).toHaveLength(1);
    expect(all).not.toContain('Sub-agent prompt');
    expect(all).not.toContain('local-command-caveat');
    expect(all).not.toContain('hook_progress');
    expect(all).not.toContain('Configure PostgreSQL for the billing service');
  });

  it('labels the compaction summary and records where the post-compaction conversation starts', () => {
    expect(parsed.compactions).toEqual([3]);
    expect(parsed.turns[3]!.content.startsWith(COMPACT_SUMMARY_LABEL)).toBe(true);
    expect(parsed.sessionId).toBe('5e551011-aaaa-4bbb-8ccc-000000000001');
  });

  it('keeps a compaction summary flagged isMeta (other meta rows stay out)', () => {
    const row = (o: object) => JSON.stringify({ sessionId: 's', cwd: '/w', ...o });
    const text = [
      row({ type: 'user', uuid: 'a', message: { role: 'user', content: 'port 5433' } }),
      row({ type: 'user', uuid: 'b', isMeta: true, message: { role: 'user', content: 'caveat' } }),
      row({
        type: 'user',
        uuid: 'c',
        isMeta: true,
        isCompactSummary: true,
        message: { role: 'user', content: 'The port is 5433.' },
      }),
    ].join('\n');
    const r = parseClaudeCodeTranscript(text, 't.jsonl');
    expect(r.turns.map((t) => t.content)).toEqual([
      'port 5433',
      `${COMPACT_SUMMARY_LABEL}The port is 5433.`,
    ]);
  });

  it('joins text blocks of an array tool result', () => {
    expect(parsed.turns[5]!.content).toContain(
      '[tool_result: Read id=toolu_01READ]\n[info] Running BillingWeb.Endpoint with cowboy 2.12 at 127.0.0.1:4000\n[info] GET /invoices 200 in 12ms',
    );
  });

  it("keeps a sub-agent's own transcript (every row isSidechain)", () => {
    const sub = parseClaudeCodeTranscript(
      fixture('claude-code-subagent.jsonl'),
      'agent-f00d.jsonl',
    );
    expect(sub.turns.map((t) => t.role)).toEqual(['user', 'assistant', 'assistant']);
    expect(sub.turns[1]!.content).toContain('priv/repo/migrations/20260301_create_invoices.exs');
  });

  it('never turns archived pages a hook injected into a new turn', () => {
    const page = formatArchivedBlock({
      step_id: 1,
      payload_sha256: 'a'.repeat(64),
      chunk: 0,
      chunks: 1,
      truncated: false,
      content: 'old page',
    });
    const rows = [
      { type: 'user', uuid: 'u1', message: { role: 'user', content: page } },
      { type: 'user', uuid: 'u2', message: { role: 'user', content: `What next?\n\n${page}` } },
    ].map((r) => JSON.stringify(r));
    const r = parseClaudeCodeTranscript(`${session}${rows.join('\n')}\n`, 's.jsonl');
    expect(r.turns).toHaveLength(parsed.turns.length + 1);
    expect(r.turns.at(-1)).toEqual({ step_id: 6, role: 'user', content: 'What next?' });
  });

  it('names the line of a malformed row and what is wrong', () => {
    const lines = session.split('\n');
    lines.splice(4, 0, '{"type": "assistant", "message": ');
    const e = thrown(() => parseClaudeCodeTranscript(lines.join('\n'), 'bad.jsonl'));
    expect(isUsageError(e)).toBe(true);
    expect(e.message).toMatch(/^bad\.jsonl:5: not valid JSON/);
    expect(e.message.split('\n')).toHaveLength(1);
  });

  it('rejects rows that are not transcript rows, naming the line', () => {
    expect(
      thrown(() => parseClaudeCodeTranscript('{"type":"user","uuid":"x"}\n', 'a.jsonl')).message,
    ).toBe('a.jsonl:1: "user" row has no "message" object');
    expect(thrown(() => parseClaudeCodeTranscript('\n[1,2]\n', 'a.jsonl')).message).toBe(
      'a.jsonl:2: expected a JSON object (a transcript row)',
    );
    expect(thrown(() => parseClaudeCodeTranscript('{"role":"user"}\n', 'a.jsonl')).message).toMatch(
      /^a\.jsonl:1: transcript row has no "type"/,
    );
    const badBlock = JSON.stringify({
      type: 'assistant',
      message: { role: 'assistant', content: [{ text: 'x' }] },
    });
    expect(thrown(() => parseClaudeCodeTranscript(badBlock, 'a.jsonl')).message).toBe(
      'a.jsonl:1: message content block 0 has no "type"',
    );
  });
});

describe('TranscriptReader', () => {
  it('resumes from persisted state with the same turns as one pass', () => {
    const expected = parseClaudeCodeTranscript(session, 's.jsonl');
    const lines = session.split('\n');
    let reader = new TranscriptReader();
    const got: ImportedTurn[] = [];
    lines.forEach((line, i) => {
      got.push(...reader.pushLine(line, i + 1, 's.jsonl'));
      reader = new TranscriptReader(JSON.parse(JSON.stringify(reader.state())));
    });
    got.push(...reader.flush());
    expect(got.sort((a, b) => a.step_id - b.step_id)).toEqual(expected.turns);
    expect(reader.compactionSteps).toEqual(expected.compactions);
    expect(reader.session).toBe(expected.sessionId);
  });

  it('does not read a row again when its uuid was already read in an earlier chunk', () => {
    const lines = session.split('\n');
    const r = new TranscriptReader();
    for (const [i, l] of lines.entries()) r.pushLine(l, i + 1, 's.jsonl');
    const again = new TranscriptReader(r.state());
    const emitted = lines.flatMap((l, i) => again.pushLine(l, i + 1, 's.jsonl'));
    expect(again.nextStep).toBe(r.nextStep);
    expect(emitted).toEqual([]);
  });
});
