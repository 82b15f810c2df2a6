import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Command } from 'commander';
import { DEMO_QUESTIONS, runDemo } from '../../engine/demo-scenario.js';
import type { PageInResult, RecallResult, ValidateResult } from '../../engine/types.js';
import { globals } from '../context.js';

function say(json: boolean, text: string): void {
  if (!json) process.stdout.write(`${text}\n`);
}

/** `contextfold demo`. */
export function register(program: Command): void {
  program
    .command('demo')
    .description("run the specification's 500-turn scenario in a temporary store, phase by phase")
    .option('--keep', 'keep the temporary store and print its path')
    .action(async (opts: { keep?: boolean }, cmd: Command) => {
      const g = globals(cmd);
      const root = mkdtempSync(join(tmpdir(), 'contextfold-demo-'));
      const dir = join(root, '.contextfold');
      try {
        const report = await runDemo({
          dir,
          onPhase: (phase, d) => {
            if (phase === 'fold') {
              const x = d as { folded: number; fold_ms: number };
              say(
                g.json,
                `1. Fold: ${x.folded} turns of a long session moved to cold storage in ${x.fold_ms} ms (${dir})`,
              );
            } else if (phase === 'recall') {
              const r = d as RecallResult;
              say(
                g.json,
                `\n2. Recall "${DEMO_QUESTIONS.recall}": chronological candidates (CONF-04)`,
              );
              for (const c of r.candidates.filter((c) => c.status !== 'related')) {
                say(
                  g.json,
                  `   step ${String(c.step_id).padStart(3)}  ${c.status.padEnd(20)} ${c.summary}`,
                );
              }
            } else if (phase === 'page-in') {
              const p = d as PageInResult;
              say(g.json, `\n3. User asks: "${DEMO_QUESTIONS.scan}"`);
              say(
                g.json,
                `   The software MMU pages in, hash-verified (CONF-13): ${p.pages.map((x) => x.step_id).join(', ')}`,
              );
              for (const page of p.pages) {
                say(
                  g.json,
                  `   ── step ${page.step_id} (${page.tokens} tokens, sha256 ${page.payload_sha256.slice(0, 12)}…) ← ${page.matched_terms.join(', ')}`,
                );
                for (const line of page.content.split('\n')) say(g.json, `      ${line}`);
              }
            } else if (phase === 'evict') {
              const x = d as {
                evicted: number[];
                evictions_recorded: number;
                with_pages: number;
                next_turn: number;
              };
              say(
                g.json,
                `\n4. After the response the pages are evicted (CONF-07): ${x.evicted.join(', ')} (${x.evictions_recorded} evictions recorded in the store).\n   This turn's prompt was ${x.with_pages} tokens with its pages; the next prompt carries none of them: ${x.next_turn} tokens.`,
              );
            } else if (phase === 'tamper') {
              const x = d as { step_id: number; refused: boolean; error: string | null };
              say(
                g.json,
                `\n5. One byte of step ${x.step_id} is changed on disk; hydrate refuses it (CONF-09):\n   ${x.error}`,
              );
            } else if (phase === 'validate') {
              const v = d as ValidateResult;
              say(
                g.json,
                `\n6. validate: ${v.ok ? 'ok' : `${v.problems.length} problem(s)`} in ${v.checked} nodes`,
              );
              for (const p of v.problems) say(g.json, `   ${p.kind}: ${p.message}`);
            }
          },
        });
        if (g.json) process.stdout.write(`${JSON.stringify(report)}\n`);
        else if (opts.keep) say(false, `\nstore kept at ${dir}`);
      } finally {
        if (!opts.keep) rmSync(root, { recursive: true, force: true });
      }
    });
}
