import { describe, expect, it } from 'vitest';
import { parseAiderHistory } from './aider-history.js';

const history = [
  '',
  '# aider chat started at 2025-07-15 11:38:37',
  '',
  '> /opt/homebrew/bin/aider  ',
  '> Aider v0.85.1  ',
  '',
  '#### run the billing tests  ',
  '#### and fix what fails  ',
  '',
  'The VAT rate is wrong in `billing/vat.py`:',
  '',
  '```python',
  'RATE = 0.2',
  '```',
  '',
  '> Tokens: 3.2k sent, 21 received.  ',
  '> Applied edit to billing/vat.py  ',
  '>  ',
  '> pytest -q  ',
  '> 12 passed in 0.31s  ',
  '',
  '# aider chat started at 2025-07-16 09:00:00',
  '',
  '#### thanks\r',
  '',
].join('\n');

describe('parseAiderHistory', () => {
  const turns = parseAiderHistory(history, 'h.md');

  it('makes one turn per run of lines by the same author: user input, reply, aider output', () => {
    expect(turns.map((t) => [t.step_id, t.role])).toEqual([
      [0, 'tool'],
      [1, 'user'],
      [2, 'assistant'],
      [3, 'tool'],
      [4, 'user'],
    ]);
    expect(turns[0]!.content).toBe(
      '# aider chat started at 2025-07-15 11:38:37\n\n/opt/homebrew/bin/aider\nAider v0.85.1',
    );
    expect(turns[1]!.content).toBe('run the billing tests\nand fix what fails');
    expect(turns[2]!.content).toBe(
      'The VAT rate is wrong in `billing/vat.py`:\n\n```python\nRATE = 0.2\n```',
    );
  });

  it("keeps aider's output with the chat start that follows it, and drops the Markdown line breaks", () => {
    expect(turns[3]!.content).toBe(
      [
        'Tokens: 3.2k sent, 21 received.',
        'Applied edit to billing/vat.py',
        '',
        'pytest -q',
        '12 passed in 0.31s',
        '',
        '# aider chat started at 2025-07-16 09:00:00',
      ].join('\n'),
    );
    expect(turns[4]!.content).toBe('thanks');
  });

  it('refuses a file that is not an aider history, in one line', () => {
    expect(() => parseAiderHistory('# Notes\n\nsome text\n', 'notes.md')).toThrow(
      /^notes\.md: not an aider chat history: no "# aider chat started at …" line/,
    );
  });
});
