import type { Command } from 'commander';
import type { HistoryRecord } from '../../harness/messages.js';
import { type CallReport, type PerCallTotals, runPerCall } from '../../harness/per-call.js';
import { Session } from '../../harness/session.js';
import { runTurns, type TurnReport } from '../../harness/turns-file.js';
import { readHistoryRecords } from '../../import/turns-jsonl.js';
import { shownStore } from '../../store/pg/pg-url.js';
import { globals, parseIntArg, parsePositiveIntArg } from '../context.js';
import {
  engineOptions,
  NO_REDACT_FLAG,
  NO_REDACT_HELP,
  parseLiveOverflow,
} from '../engine-options.js';
import { helpText } from '../help-text.js';

/** A report's parts on one line, then one indented line per warning. */
function withWarnings(parts: string[], warnings: readonly string[]): string {
  return [parts.join(' · '), ...warnings.map((w) => `  warning: ${w}`)].join('\n');
}

function humanLine(r: TurnReport): string {
  const parts = [`turn ${r.turn}`, `prompt step ${r.step_id}`, `${r.pack_tokens} tokens`];
  if (r.folded.length > 0) parts.push(`folded ${r.folded.length}`);
  if (r.paged_in.length > 0) parts.push(`paged in ${r.paged_in.join(', ')}`);
  if (r.evicted.length > 0) parts.push(`evicted ${r.evicted.join(', ')}`);
  return withWarnings(parts, r.warnings);
}

function perCallLine(r: CallReport): string {
  const parts = [
    `call ${r.turn}`,
    `step ${r.step_id}`,
    `history ${r.history_tokens} → sent ${r.pack_tokens} tokens`,
  ];
  if (r.folded.length > 0) parts.push(`folded ${r.folded.length}`);
  if (r.paged_in.length > 0) parts.push(`paged in ${r.paged_in.join(', ')}`);
  if (r.excerpted.length > 0) parts.push(`excerpted ${r.excerpted.join(', ')}`);
  return withWarnings(parts, r.warnings);
}

function perCallTotal(t: PerCallTotals, budget: number, dir: string): string {
  const pct = (t.sent_ratio * 100).toFixed(1);
  const over =
    t.over_budget_calls === 0
      ? '0 over budget'
      : `${t.over_budget_calls} over budget (${t.over_budget_live_calls} with a live turn alone over it)`;
  const cut = t.excerpted_calls > 0 ? `, ${t.excerpted_calls} with the live turn excerpted` : '';
  return `${t.calls} model call(s) over ${t.messages} message(s): sent ${t.sent_tokens} of ${t.history_tokens} history tokens (${pct}%), largest pack ${t.largest_pack}/${budget}, ${over}${cut} → ${dir}\n`;
}

interface SessionFlags {
  budget: string;
  keepRecent: string;
  foldThreshold: string;
  liveOverflow: string;
  perCall?: boolean;
}

/** Where the reports go, and the budget their summary lines measure against. */
interface ReportTarget {
  json: boolean;
  dir: string;
  budget: number;
}

/** Replays a turns file into a session store, one report line per prompt (or per model call). */
async function runSession(file: string, opts: SessionFlags, cmd: Command): Promise<void> {
  const g = globals(cmd);
  const budget = parsePositiveIntArg(opts.budget, '--budget');
  const keepRecent = parseIntArg(opts.keepRecent, '--keep-recent');
  const foldThreshold = parseIntArg(opts.foldThreshold, '--fold-threshold');
  const liveOverflow = parseLiveOverflow(opts.liveOverflow);
  // The whole file is validated before the store is touched.
  const records = readHistoryRecords(file);
  const e = engineOptions(cmd);
  const session = await Session.open({
    dir: g.dir,
    budget,
    keepRecent,
    foldThreshold,
    liveOverflow,
    ...(e.tokenizer ? { tokenizer: e.tokenizer } : {}),
    ...(e.sessionId ? { sessionId: e.sessionId } : {}),
    ...(e.retrieval ? { retrieval: e.retrieval } : {}),
    ...(e.redact === false ? { redact: false } : {}),
    ...(opts.perCall ? { pageInToolOutput: true } : {}),
  });
  const target: ReportTarget = { json: g.json, dir: shownStore(g.dir), budget };
  try {
    if (opts.perCall) await replayPerCall(session, records, target);
    else await replayTurns(session, records, target);
  } finally {
    await session.close();
  }
}

/** `--per-call`: a line per model call, then the run's totals. */
async function replayPerCall(
  session: Session,
  records: readonly HistoryRecord[],
  target: ReportTarget,
): Promise<void> {
  const total = await runPerCall(session, records, (r) => {
    process.stdout.write(target.json ? `${JSON.stringify(r)}\n` : `${perCallLine(r)}\n`);
  });
  process.stdout.write(
    target.json ? `${JSON.stringify({ total })}\n` : perCallTotal(total, target.budget, target.dir),
  );
}

/** A line per prompt, then (not with --json) a summary of the session. */
async function replayTurns(
  session: Session,
  records: readonly HistoryRecord[],
  target: ReportTarget,
): Promise<void> {
  let maxTokens = 0;
  const r = await runTurns(session, records, (t) => {
    maxTokens = Math.max(maxTokens, t.pack_tokens);
    process.stdout.write(target.json ? `${JSON.stringify(t)}\n` : `${humanLine(t)}\n`);
  });
  if (!target.json) {
    const s = session.status();
    process.stdout.write(
      `${r.turns} prompt(s), ${r.messages} message(s): ${s.folded} turn(s) folded, largest pack ${maxTokens}/${target.budget} tokens → ${target.dir}\n`,
    );
  }
}

const HELP = helpText({
  notes: [
    'Each user line is an incoming prompt: the pack for it is built (older turns folded into',
    'folded-step records, the archived turns the prompt needs paged in, verified), then the',
    'lines up to the next user line are the response and the pages are evicted. The session',
    '(history and every decision) is recorded in <dir>/events.jsonl; `contextfold pack --at STEP`',
    'rebuilds any of its packs.',
    '',
    'With --json, one line per prompt:',
    '  {"turn", "step_id", "pack_tokens", "baseline_tokens", "folded", "paged_in", "evicted", "warnings"}',
    '',
    'With --per-call, a pack is built before every model call instead (before each run of',
    'assistant lines, from the history up to it: the same code path as `contextfold proxy`), and',
    'each line also has "history_messages", "history_tokens" (the whole history: what an',
    'unmodified client sends), "live_tokens" (live turn and pinned layer, never dropped) and',
    '"budget" and "excerpted" (live messages sent as head and tail to fit the budget); a last',
    'line {"total": {...}} sums the run.',
    '',
  ],
  examples: [
    'contextfold --dir /tmp/s/.contextfold session turns.jsonl --budget 8000 --json',
    'contextfold --dir /tmp/s/.contextfold pack --at 42',
  ],
});

/** `contextfold session`. */
export function register(program: Command): void {
  program
    .command('session')
    .argument(
      '<TURNS>',
      'turns JSONL: one {"step_id", "role", "content"} a line (the ../shared/data format); - reads standard input',
    )
    .option('--budget <N>', 'token budget of every pack', '16000')
    .option('--keep-recent <K>', 'turns before the prompt always kept verbatim', '10')
    .option('--fold-threshold <N>', 'older turns above this many tokens are folded', '256')
    .option(NO_REDACT_FLAG, NO_REDACT_HELP)
    .option(
      '--live-overflow <mode>',
      'a live turn larger than the budget: excerpt (head and tail, marked) or send-whole',
      'excerpt',
    )
    .option(
      '--per-call',
      'build a pack before every model call (each run of assistant lines, tool loops included), as `contextfold proxy` does',
    )
    .addHelpText('after', HELP)
    .action(runSession);
}
