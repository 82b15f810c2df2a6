import { describe, expect, it } from 'vitest';
import { isUsageError } from '../../protocol/errors.js';
import { parseHookInput } from './hook-input.js';

const valid = { session_id: 'a.b_c-1', transcript_path: '/t.jsonl' };

function problem(value: unknown, event: Parameters<typeof parseHookInput>[1] = 'pre-compact') {
  try {
    parseHookInput(typeof value === 'string' ? value : JSON.stringify(value), event);
  } catch (e) {
    expect(isUsageError(e)).toBe(true);
    return (e as Error).message;
  }
  throw new Error('accepted');
}

describe('parseHookInput', () => {
  it('returns the input with the fields Claude Code adds beyond the known ones', () => {
    const input = {
      ...valid,
      prompt: 'hi',
      hook_event_name: 'UserPromptSubmit',
      permission_mode: 'x',
    };
    expect(parseHookInput(JSON.stringify(input), 'user-prompt-submit')).toEqual(input);
  });

  it.each([
    ['not JSON', '{', /^hook input on stdin is not JSON/],
    ['an array', [valid], /^hook input: \(root\): expected an object$/],
    ['no session id', { transcript_path: '/t' }, /^hook input: session_id: required$/],
    [
      'a session id with a slash',
      { ...valid, session_id: '../x' },
      /session_id: must be a plain id/,
    ],
    ['an empty session id', { ...valid, session_id: '' }, /session_id: must be a plain id/],
    // `..` named the directory above the session stores, `.` the one holding them.
    ['a session id of two dots', { ...valid, session_id: '..' }, /session_id: must be a plain id/],
    ['a session id of one dot', { ...valid, session_id: '.' }, /session_id: must be a plain id/],
    ['a session id of 201 characters', { ...valid, session_id: 'a'.repeat(201) }, /plain id/],
    ['a numeric session id', { ...valid, session_id: 7 }, /session_id: must be a plain id/],
    [
      'an empty transcript path',
      { ...valid, transcript_path: '' },
      /transcript_path: expected a path/,
    ],
    ['no transcript path', { session_id: 'a' }, /^hook input: transcript_path: required$/],
    [
      'a prompt that is not a string',
      { ...valid, prompt: 3 },
      /^hook input: prompt: expected a string$/,
    ],
    [
      'another event',
      { ...valid, hook_event_name: 'UserPromptSubmit' },
      /is for UserPromptSubmit, but this is contextfold hook pre-compact \(PreCompact\)/,
    ],
  ])('refuses %s with one line', (_, value, message) => {
    expect(problem(value)).toMatch(message);
  });

  it('accepts an input with only the required fields', () => {
    expect(parseHookInput(JSON.stringify(valid), 'session-start')).toEqual(valid);
  });
});
