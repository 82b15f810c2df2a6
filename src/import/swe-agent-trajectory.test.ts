import { describe, expect, it } from 'vitest';
import { parseSweAgentTrajectory } from './swe-agent-trajectory.js';

const v0 = {
  environment: 'swe_main',
  history: [
    { role: 'system', content: 'SETTING: You are an autonomous programmer.', agent: 'primary' },
    { role: 'user', content: 'Fix the VAT rate bug.', agent: 'primary' },
    {
      role: 'assistant',
      content: 'Let me look at the file.\n```\nopen billing/vat.py\n```',
      thought: 'Let me look at the file.\n',
      action: 'open billing/vat.py\n',
      agent: 'primary',
    },
    {
      role: 'user',
      content: '[File: billing/vat.py (3 lines total)]\n1:RATE = 0.19',
      agent: 'primary',
    },
    {
      role: 'assistant',
      content: 'Done.\n```\nsubmit\n```',
      thought: 'Done.',
      action: 'submit',
      agent: 'primary',
    },
  ],
  info: { exit_status: 'submitted' },
  trajectory: [],
};

describe('parseSweAgentTrajectory', () => {
  it('keeps the system prompt and the task as turns, and pairs each action with its observation', () => {
    const turns = parseSweAgentTrajectory(JSON.stringify(v0, null, 2), 'run.traj');
    expect(turns.map((t) => [t.step_id, t.role])).toEqual([
      [0, 'system'],
      [1, 'user'],
      [2, 'assistant'],
      [3, 'assistant'],
    ]);
    expect(turns[2]!.content).toBe(
      [
        'Let me look at the file.\n',
        '[tool_use: open id=action-2]',
        'open billing/vat.py',
        '[tool_result: open id=action-2]',
        '[File: billing/vat.py (3 lines total)]\n1:RATE = 0.19',
      ].join('\n'),
    );
    // The last action has no observation: the call is kept alone.
    expect(turns[3]!.content).toBe('Done.\n[tool_use: submit id=action-4]\nsubmit');
  });

  it('reads SWE-agent 1.x messages: text blocks and message types', () => {
    const text = (t: string) => [{ type: 'text', text: t }];
    const v1 = {
      info: {},
      history: [
        { role: 'user', content: text('Fix it.'), message_type: 'user' },
        {
          role: 'assistant',
          content: text('Run the tests.'),
          thought: 'Run the tests.',
          action: 'pytest -q',
          message_type: 'action',
        },
        { role: 'user', content: text('12 passed'), message_type: 'observation' },
        { role: 'user', content: text('Please go on.'), message_type: 'user' },
      ],
    };
    const turns = parseSweAgentTrajectory(JSON.stringify(v1), 'run.traj');
    expect(turns.map((t) => t.role)).toEqual(['user', 'assistant', 'user']);
    expect(turns[1]!.content).toContain('[tool_result: pytest id=action-1]\n12 passed');
    expect(turns[2]!.content).toBe('Please go on.');
  });

  it('refuses what is not a trajectory, naming the file and the message', () => {
    expect(() => parseSweAgentTrajectory('{"trajectory": []}', 'x.traj')).toThrow(
      /^x\.traj: not a SWE-agent trajectory: no "history" array of messages$/,
    );
    const bad =
      '{\n"history": [\n{"role": "user", "content": "a"},\n{"role": "robot", "content": "b"}\n]}';
    expect(() => parseSweAgentTrajectory(bad, 'x.traj')).toThrow(
      /^x\.traj:4: history message 1: "role" must be "system", "user", "assistant" or "tool", got "robot"$/,
    );
    expect(() => parseSweAgentTrajectory('{"history": [', 'x.traj')).toThrow(
      /^x\.traj:1: not valid JSON/,
    );
  });
});
