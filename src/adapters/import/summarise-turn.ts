import type { ImportedTurn } from './turn.js';

/** Folded-step summaries are at most 280 characters (folded_step.schema.json). */
export const MAX_SUMMARY_CHARS = 280;

const LABEL = /^\[(?:tool_use|tool_result|thinking|redacted_thinking|image|document|file|audio|refusal|compact summary)\b[^\]]*\]$/;
const TOOL = /^\[tool_use: (\S+) id=/;

function clip(text: string, max: number): string {
  const cps = Array.from(text);
  return cps.length <= max ? text : `${cps.slice(0, max - 1).join('')}…`;
}

/**
 * A deterministic one-line summary of a turn: role, its first line of prose and the tools it
 * called, at most 280 characters. No model is involved, so the same history always gives the
 * same summaries (and the same folds).
 *
 * @example
 * summariseTurn({ step_id: 3, role: 'user', content: 'Fix the login bug\nDetails...' });
 * // 'user: Fix the login bug'
 */
export function summariseTurn(turn: ImportedTurn): string {
  const tools: string[] = [];
  let headline: string | null = null;
  let fallback: string | null = null;
  let seenTool = false;
  for (const raw of turn.content.split('\n')) {
    const line = raw.trim();
    if (line === '') continue;
    const tool = TOOL.exec(line);
    if (tool) {
      if (!tools.includes(tool[1]!)) tools.push(tool[1]!);
      seenTool = true;
      continue;
    }
    if (LABEL.test(line)) {
      if (line.startsWith('[tool_result')) seenTool = true;
      continue;
    }
    if (!seenTool && headline === null) headline = line;
    fallback ??= line;
  }
  const text = headline ?? fallback ?? '(empty)';
  const suffix = tools.length > 0 ? ` (tools: ${tools.join(', ')})` : '';
  const role = turn.role === 'tool' ? 'tool result' : turn.role;
  return clip(`${role}: ${clip(text, 200)}${suffix}`, MAX_SUMMARY_CHARS);
}
