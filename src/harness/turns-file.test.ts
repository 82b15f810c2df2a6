import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { tempDir } from '../test-utils/temp-dir.js';
import type { HistoryRecord } from './messages.js';
import { Session } from './session.js';
import { runTurns, type TurnReport } from './turns-file.js';

const records: HistoryRecord[] = Array.from({ length: 6 }, (_, i) => ({
  step_id: i,
  role: i % 2 === 0 ? 'user' : 'assistant',
  content: i % 2 === 0 ? `question ${i}` : `answer ${i}`,
}));

const open = (dir: string) => Session.open({ dir, budget: 4000, tokenizer: 'reference' });

describe('runTurns', () => {
  it('resumes a run cut short between a prompt and its response from the step the session has', async () => {
    // The rerun of `contextfold session` with the turns from that step on was refused with
    // 'finish it with afterTurn first', a call a CLI user cannot make: the store was stuck.
    const dir = join(tempDir().dir, '.contextfold');
    const first = await open(dir);
    await runTurns(first, records.slice(0, 2), () => {});
    await first.beforeTurn('question 2'); // the process died before the response came in
    await first.close();
    const again = await open(dir);
    expect(again.status()).toMatchObject({ history_length: 3, open_turn: 1 });
    const lines: TurnReport[] = [];
    await expect(runTurns(again, records.slice(0), (r) => lines.push(r))).rejects.toThrow(
      /start at step 0 but .* has 3 message\(s\).*from step 3 on/,
    );
    const r = await runTurns(again, records.slice(3), (t) => lines.push(t));
    expect(r).toEqual({ turns: 1, messages: 3 });
    expect(lines.map((l) => l.step_id)).toEqual([4]);
    expect(again.status()).toMatchObject({ history_length: 6, open_turn: null });
    expect(again.history().map((m) => m.content)).toEqual(records.map((x) => x.content));
    await again.close();
  });
});
