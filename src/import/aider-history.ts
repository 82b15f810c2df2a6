import { sourceError } from './source-error.js';
import type { ImportedTurn, TurnRole } from './turn.js';

/** The line aider writes when a chat starts; a history file is a run of such chats. */
export const AIDER_CHAT_START = '# aider chat started at';

/** One line of an aider history, by who wrote it (`null`: a blank line, which joins any turn). */
interface AiderLine {
  role: TurnRole | null;
  text: string;
}

/**
 * What aider wrote on a line: `#### …` is the user's input, `> …` is aider's own output (token
 * counts, confirmations, command output, warnings), a chat's start line is aider's too, and
 * every other line is the model's reply. The two trailing spaces aider ends its lines with
 * (a Markdown line break) are not part of the text.
 */
function classify(line: string): AiderLine {
  const text = line.endsWith('\r') ? line.slice(0, -1) : line;
  if (text.trim() === '') return { role: null, text: '' };
  if (text.startsWith(AIDER_CHAT_START)) return { role: 'tool', text: text.trimEnd() };
  if (text === '####' || text.startsWith('#### ')) {
    return { role: 'user', text: text.slice(5).trimEnd() };
  }
  if (text === '>' || text.startsWith('> ')) return { role: 'tool', text: text.slice(2).trimEnd() };
  return { role: 'assistant', text };
}

/**
 * Parses an aider chat history (`.aider.chat.history.md`): one turn per run of lines with the
 * same author. The user's input (`#### …`) is a `user` turn, the model's reply an `assistant`
 * turn, and aider's own output (`> …`: token counts, edits applied, commands run and their
 * output) a `tool` turn, so a question about "the tests aider ran" pages that output in. Blank
 * lines stay inside the turn they are in; a file with no chat start line is refused.
 *
 * @example
 * parseAiderHistory('# aider chat started at 2025-07-15 11:38:37\n\n#### fix the test  \n\nDone.\n', 'h.md');
 * // [{ step_id: 0, role: 'tool', … }, { step_id: 1, role: 'user', content: 'fix the test' }, …]
 */
export function parseAiderHistory(text: string, source: string): ImportedTurn[] {
  if (!text.split('\n', 50).some((l) => l.startsWith(AIDER_CHAT_START))) {
    throw sourceError(
      source,
      null,
      `not an aider chat history: no "${AIDER_CHAT_START} …" line (aider writes one per chat to .aider.chat.history.md)`,
    );
  }
  const turns: { role: TurnRole; lines: string[] }[] = [];
  for (const raw of text.split('\n')) {
    const { role, text: line } = classify(raw);
    const current = turns[turns.length - 1];
    if (role === null) current?.lines.push('');
    else if (current?.role === role) current.lines.push(line);
    else turns.push({ role, lines: [line] });
  }
  return turns.map((t, step_id) => ({
    step_id,
    role: t.role,
    content: t.lines.join('\n').replace(/\n+$/, ''),
  }));
}
