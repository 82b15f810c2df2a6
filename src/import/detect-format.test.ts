import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { detectImportFormat } from './detect-format.js';

const fixture = (name: string) =>
  readFileSync(new URL(`./fixtures/${name}`, import.meta.url), 'utf8');
const detect = (text: string) => detectImportFormat({ text, source: 'f' });

describe('detectImportFormat', () => {
  it.each([
    ['claude-code-session.jsonl', 'claude-code'],
    ['claude-code-subagent.jsonl', 'claude-code'],
    ['openai-chat.json', 'openai'],
    ['anthropic-messages.json', 'anthropic'],
    ['turns.jsonl', 'turns'],
  ] as const)('tells %s as %s', (name, format) => {
    expect(detect(fixture(name))).toBe(format);
  });

  it('reads the markers only one API has', () => {
    const user = { role: 'user', content: 'Which port?' };
    expect(detect(JSON.stringify([user, { role: 'tool', content: '5433' }]))).toBe('openai');
    expect(detect(JSON.stringify([{ ...user, tool_call_id: 'c1' }]))).toBe('openai');
    expect(detect(JSON.stringify({ messages: [{ role: 'developer', content: 'x' }, user] }))).toBe(
      'openai',
    );
    const block = (type: string) => ({ role: 'user', content: [{ type }] });
    expect(detect(JSON.stringify([block('image_url')]))).toBe('openai');
    expect(detect(JSON.stringify([block('tool_result')]))).toBe('anthropic');
    expect(detect(JSON.stringify({ system: 'Be brief.', messages: [user] }))).toBe('anthropic');
    // A one-record turns file is a whole JSON document, and still turns.
    expect(detect('{"step_id": 0, "role": "user", "content": "hi"}\n')).toBe('turns');
  });

  it('tells a Codex CLI rollout by its records', () => {
    const meta = {
      timestamp: '2025-12-08T00:37:46.102Z',
      type: 'session_meta',
      payload: { id: 's' },
    };
    expect(detect(`${JSON.stringify(meta)}\n`)).toBe('codex');
    // The first rollouts: a bare meta line, state markers and bare items (codex-rs recorder.rs).
    const first = [
      {
        id: '5973b6c0-94b8-487b-a530-2aeb6098ae0e',
        timestamp: '2025-05-07T17:24:21.123Z',
        instructions: null,
      },
      { record_type: 'state' },
      { type: 'message', role: 'user', content: [{ type: 'input_text', text: 'hi' }] },
    ];
    expect(detect(first.map((r) => JSON.stringify(r)).join('\n'))).toBe('codex');
  });

  it('tells an aider history and a SWE-agent trajectory', () => {
    expect(detect('\n# aider chat started at 2025-07-15 11:38:37\n\n#### hi  \n')).toBe('aider');
    const traj = { environment: 'swe_main', history: [{ role: 'user', content: 'Fix it' }] };
    expect(detect(JSON.stringify({ ...traj, trajectory: [] }))).toBe('swe-agent');
    expect(detect(JSON.stringify({ ...traj, info: {} }))).toBe('swe-agent');
    // A history array alone is not enough to call it a trajectory.
    expect(() => detect(JSON.stringify({ history: traj.history }))).toThrow(/pass `format`/);
    // Markdown that only mentions aider later is not an aider history.
    expect(() => detect('notes\n# aider chat started at 2025-07-15\n')).toThrow(/pass `format`/);
  });

  it('refuses to guess: plain messages, mixed markers, anything else', () => {
    const plain = [
      { role: 'user', content: 'Which port?' },
      { role: 'assistant', content: [{ type: 'text', text: '5433' }] },
    ];
    expect(() => detect(JSON.stringify(plain))).toThrow(
      /cannot tell the format of f: its messages read the same as OpenAI and Anthropic messages; pass `format`/,
    );
    const mixed = [{ role: 'tool', content: [{ type: 'tool_result' }] }];
    expect(() => detect(JSON.stringify(mixed))).toThrow(/read the same/);
    for (const text of ['hello\nworld\n', '42', '{"a": 1}\n{"b": 2}\n']) {
      expect(() => detect(text)).toThrow(
        /neither a message array, a JSONL transcript, rollout or turns file, an aider history nor a SWE-agent trajectory; pass `format` \(claude-code, codex, openai, anthropic, aider, swe-agent, turns\)/,
      );
    }
  });

  it('a JSON document cut short names the line it breaks on (not the format to pass)', () => {
    const whole = JSON.stringify(
      {
        messages: [
          { role: 'user', content: 'Which port?' },
          { role: 'tool', content: '5433' },
        ],
      },
      null,
      2,
    );
    expect(() => detect(whole.slice(0, 60))).toThrow(
      /^f:5: not valid JSON \(unexpected end of input/,
    );
    expect(() => detect('[{"role": "user", "content": "Which p')).toThrow(
      /^f:1: not valid JSON \(unexpected end of input, expected a closing quote at column 38\)$/,
    );
  });

  it('an empty file or message array says there is nothing to import (not to pass --format)', () => {
    for (const text of ['', ' \n\n', '[]', '{"messages": []}']) {
      expect(() => detect(text), JSON.stringify(text)).toThrow(
        /^f has no messages: nothing to import$/,
      );
    }
  });
});
