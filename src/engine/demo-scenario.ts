import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { ipcfErrorName, isContextFoldError } from '../protocol/errors.js';
import { ContextFold } from './context-fold.js';
import type {
  FoldInput,
  RecallResult,
  RetrievalMode,
  ScanResult,
  ValidateResult,
} from './types.js';

/** The eight key turns of the specification's demo (IPCF README §6). */
const KEY_TURNS: FoldInput[] = [
  {
    stepId: 37,
    summary: 'PostgreSQL configured on Port 5433',
    content: '$ docker compose up -d postgres\nPostgreSQL running on port 5433',
  },
  {
    stepId: 91,
    summary: 'PostgreSQL switched to Port 5434 (conflict resolution)',
    content: '$ psql -p 5434 -U admin\nConflict resolved on port 5434',
  },
  {
    stepId: 137,
    summary: 'PostgreSQL port 5434 reverted back to Port 5433',
    content: "$ sed -i 's/5434/5433/' config.env\nPostgreSQL Port 5433 restored",
  },
  {
    stepId: 200,
    summary: 'Authentication middleware refactored; JWT secret rotated',
    content: 'JWT secret updated in auth/middleware.py',
  },
  {
    stepId: 318,
    summary: 'Migration V12 applied to production database',
    content: '$ python manage.py migrate V12__TenantBilling.sql\nMigration V12 applied',
  },
  {
    stepId: 342,
    summary: 'Migration V12 rolled back due to deadlocks',
    content: 'Deadlock detected in billing table; rolled back V12',
  },
  {
    stepId: 447,
    summary: 'Migration V12 patched and re-applied successfully',
    content: 'Patched V12__TenantBilling.sql with row-level locks; migration complete',
  },
  {
    stepId: 499,
    summary: 'Final review: all services healthy, Port 5433 confirmed',
    content: 'All health checks passing on port 5433',
  },
];

const MODULES = [
  'lexer',
  'parser',
  'renderer',
  'scheduler',
  'cache',
  'router',
  'mailer',
  'exporter',
];

/**
 * The 500-turn demo session: the spec's eight key turns among 492 deterministic filler turns
 * (lint, unit tests, docs) that share none of the demo questions' terms.
 */
export function demoHistory(): FoldInput[] {
  const key = new Map(KEY_TURNS.map((t) => [t.stepId, t]));
  const out: FoldInput[] = [];
  for (let step = 0; step < 500; step++) {
    const k = key.get(step);
    if (k) {
      out.push(k);
      continue;
    }
    const mod = MODULES[step % MODULES.length]!;
    const n = (step * 7919) % 97;
    out.push({
      stepId: step,
      summary: `Refactor ${mod} module, pass ${step}`,
      content: `$ npm run lint -- src/${mod}/index.ts\n0 problems\n$ npm test -- ${mod}\n${n + 3} tests passed in ${(n % 9) + 1}.${n % 10}s\nrenamed helper ${mod}Helper${step} for clarity`,
    });
  }
  return out;
}

/** What the demo asks: one explicit recall, three questions, then an unrelated prompt. */
export const DEMO_QUESTIONS = {
  recall: 'PostgreSQL port',
  ask: [
    'What port is PostgreSQL on now, and why was migration V12 rolled back?',
    'Is migration V12 applied now?',
    'Which file holds the JWT secret?',
  ],
  next: 'Thanks. Draft the release announcement for the team.',
} as const;

/** One page a question brought in: verified against its hash before it was placed. */
export interface DemoPage {
  step_id: number;
  /** The chronological label of the pick (ranked mode), e.g. `latest_chronological`. */
  status: string | null;
  tokens: number;
  payload_sha256: string;
  matched_terms: string[];
  content: string;
}

/** What one question's prompt carried. */
export interface DemoQuestion {
  prompt: string;
  prompt_tokens: number;
  pages: DemoPage[];
  /** The prompt with folding: the question and its verified pages. */
  tokens_with_folding: number;
}

/** Everything the demo did, phase by phase (JSON-serialisable). */
export interface DemoReport {
  retrieval: RetrievalMode;
  folded: number;
  fold_ms: number;
  /** Tokens of the 500 turns verbatim: what every prompt carries without folding. */
  raw_history_tokens: number;
  recall: RecallResult;
  questions: DemoQuestion[];
  /** Pages evicted after the answers (CONF-07) and what the next, unrelated prompt carries. */
  evict: {
    evicted: number[];
    evictions_recorded: number;
    next_pages: number[];
    next_tokens: number;
  };
  tamper: { step_id: number; refused: boolean; error: string | null };
  validate: ValidateResult;
}

/** Detail passed to `onPhase` for each phase (the same objects the report holds). */
export type DemoPhase =
  | { phase: 'fold'; folded: number; fold_ms: number; raw_history_tokens: number }
  | { phase: 'recall'; recall: RecallResult }
  | { phase: 'question'; question: DemoQuestion }
  | { phase: 'evict'; evict: DemoReport['evict'] }
  | { phase: 'tamper'; tamper: DemoReport['tamper'] }
  | { phase: 'validate'; validate: ValidateResult };

function statusOf(scan: ScanResult, stepId: number): string | null {
  const pick = scan.selected.find((p) => p.step_id === stepId) as { status?: string } | undefined;
  return pick?.status ?? null;
}

async function ask(cf: ContextFold, prompt: string): Promise<DemoQuestion> {
  const r = await cf.pageIn(prompt);
  const prompt_tokens = cf.tokenizer.count(prompt);
  const pages = r.pages.map((p) => ({
    step_id: p.step_id,
    status: statusOf(r.scan, p.step_id),
    tokens: p.tokens,
    payload_sha256: p.payload_sha256,
    matched_terms: p.matched_terms,
    content: p.content,
  }));
  return { prompt, prompt_tokens, pages, tokens_with_folding: prompt_tokens + r.tokens };
}

/**
 * Runs the demo in `dir` (a fresh directory): fold a 500-turn session, count what its raw
 * history would cost every prompt, recall with chronological labels, ask three questions and
 * page in what each needs (verified), evict after each answer, then tamper with a node that
 * hydrate refuses and validate reports. Retrieval is the engine default unless `retrieval` is
 * given.
 *
 * @example
 * const report = await runDemo({ dir: '/tmp/demo/.contextfold' });
 * console.log(report.raw_history_tokens, report.questions.map((q) => q.tokens_with_folding));
 */
export async function runDemo(options: {
  dir: string;
  retrieval?: RetrievalMode;
  onPhase?: (detail: DemoPhase) => void;
}): Promise<DemoReport> {
  const phase = options.onPhase ?? (() => {});
  // A throwaway store: no analysis cache outside it.
  const cf = await ContextFold.open({
    dir: options.dir,
    cacheDir: false,
    ...(options.retrieval ? { retrieval: options.retrieval } : {}),
  });
  try {
    const history = demoHistory();
    const t0 = performance.now();
    const results = await cf.foldMany(history);
    const fold_ms = Math.round(performance.now() - t0);
    let raw_history_tokens = 0;
    for (const t of history)
      raw_history_tokens += cf.tokenizer.count(String(t.content ?? t.summary));
    phase({ phase: 'fold', folded: results.length, fold_ms, raw_history_tokens });

    const recall = await cf.recall(DEMO_QUESTIONS.recall);
    phase({ phase: 'recall', recall });

    const questions: DemoQuestion[] = [];
    const evicted: number[] = [];
    for (const prompt of DEMO_QUESTIONS.ask) {
      const question = await ask(cf, prompt);
      questions.push(question);
      phase({ phase: 'question', question });
      // After the answer the pages leave the prompt (CONF-07).
      for (const p of question.pages) evicted.push((await cf.evict(p.step_id)).step_id);
    }
    const next = await ask(cf, DEMO_QUESTIONS.next);
    const evict = {
      evicted,
      evictions_recorded: (await cf.status()).evicted,
      next_pages: next.pages.map((p) => p.step_id),
      next_tokens: next.tokens_with_folding,
    };
    phase({ phase: 'evict', evict });

    // Change one byte of step 91's payload on disk.
    const target = 91;
    const path = join(cf.dir, 'cold_nodes', 'step_000091.json');
    writeFileSync(path, readFileSync(path, 'utf8').replace('port 5434', 'port 6666'));
    let error: string | null = null;
    try {
      await cf.hydrate(target);
    } catch (e) {
      if (!isContextFoldError(e)) throw e;
      error = `${ipcfErrorName(e.code)}: ${e.message}`;
    }
    const tamper = { step_id: target, refused: error !== null, error };
    phase({ phase: 'tamper', tamper });
    const validate = await cf.validate();
    phase({ phase: 'validate', validate });
    return {
      retrieval: cf.retrieval,
      folded: results.length,
      fold_ms,
      raw_history_tokens,
      recall,
      questions,
      evict,
      tamper,
      validate,
    };
  } finally {
    await cf.close({ compact: false });
  }
}
