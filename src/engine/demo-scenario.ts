import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { ipcfErrorName, isContextFoldError } from '../protocol/errors.js';
import { ContextFold } from './context-fold.js';
import type { FoldInput, PageInResult, RecallResult, ValidateResult } from './types.js';

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

/** The demo's two questions. */
export const DEMO_QUESTIONS = {
  recall: 'PostgreSQL port',
  scan: 'What port are we using for PostgreSQL, and which migration applied the billing table?',
  next: 'Thanks. Draft the release announcement for the team.',
} as const;

/** Everything the demo did, phase by phase (JSON-serialisable). */
export interface DemoReport {
  dir: string;
  folded: number;
  fold_ms: number;
  recall: RecallResult;
  page_in: PageInResult;
  prompt_tokens: { baseline: number; with_pages: number; next_turn: number };
  evicted: number[];
  /** Steps marked evicted in the store (index `evicted` + eviction log). */
  evictions_recorded: number;
  /** Steps the next, unrelated prompt pages in. */
  next_pages: number[];
  tamper: { step_id: number; refused: boolean; error: string | null };
  validate: ValidateResult;
}

/**
 * Runs the specification's scenario in `dir`: fold 500 turns, recall with chronological
 * labels, passive multi-intent page-in (selects 342, 137, 447), eviction back to baseline,
 * then a tampered node that hydrate refuses and validate reports.
 */
export async function runDemo(options: {
  dir: string;
  onPhase?: (phase: string, detail: unknown) => void;
}): Promise<DemoReport> {
  const phase = options.onPhase ?? (() => {});
  // The specification's scenario: the reference software MMU (RGSC).
  const cf = await ContextFold.open({ dir: options.dir, retrieval: 'reference' });
  try {
    const t0 = performance.now();
    const results = await cf.foldMany(demoHistory());
    const fold_ms = Math.round(performance.now() - t0);
    phase('fold', { folded: results.length, fold_ms });

    const recall = await cf.recall(DEMO_QUESTIONS.recall);
    phase('recall', recall);

    const baselinePrompt = DEMO_QUESTIONS.scan;
    const baseline = cf.tokenizer.count(baselinePrompt);
    const pageIn = await cf.pageIn(baselinePrompt);
    const withPages = baseline + pageIn.tokens;
    phase('page-in', pageIn);

    const evicted: number[] = [];
    for (const p of pageIn.pages) evicted.push((await cf.evict(p.step_id)).step_id);
    const evictionsRecorded = (await cf.status()).evicted;
    // The next turn asks about something else: its prompt carries its own pages only (none
    // here), never the previous turn's.
    const next = await cf.pageIn(DEMO_QUESTIONS.next);
    const nextTokens = cf.tokenizer.count(DEMO_QUESTIONS.next) + next.tokens;
    phase('evict', {
      evicted,
      evictions_recorded: evictionsRecorded,
      with_pages: withPages,
      next_turn: nextTokens,
      next_pages: next.pages.map((p) => p.step_id),
    });

    // Tamper with one byte of step 91's payload on disk.
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
    phase('tamper', { step_id: target, refused: error !== null, error });
    const validate = await cf.validate();
    phase('validate', validate);
    return {
      dir: cf.dir,
      folded: results.length,
      fold_ms,
      recall,
      page_in: pageIn,
      prompt_tokens: { baseline, with_pages: withPages, next_turn: nextTokens },
      evicted,
      evictions_recorded: evictionsRecorded,
      next_pages: next.pages.map((p) => p.step_id),
      tamper: { step_id: target, refused: error !== null, error },
      validate,
    };
  } finally {
    await cf.close({ compact: false });
  }
}
