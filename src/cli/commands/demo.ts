import { rmSync } from 'node:fs';
import { join, sep } from 'node:path';
import type { Command } from 'commander';
import {
  DEMO_QUESTIONS,
  type DemoPhase,
  type DemoQuestion,
  runDemo,
} from '../../engine/demo-scenario.js';
import { makeTempDir } from '../../store/temp-dir.js';
import { globals } from '../context.js';
import { engineOptions } from '../engine-options.js';

const n = (x: number): string => x.toLocaleString('en-US');

function questionLines(q: DemoQuestion, raw: number): string[] {
  const lines = [`\n   "${q.prompt}"`];
  if (q.pages.length === 0) lines.push('     nothing to page in');
  for (const p of q.pages) {
    const label = p.status ? ` ${p.status}` : '';
    const terms = p.matched_terms.length > 0 ? `  ← ${p.matched_terms.join(', ')}` : '';
    lines.push(
      `     step ${String(p.step_id).padStart(3)}${label}, ${p.tokens} tokens, sha256 ${p.payload_sha256.slice(0, 12)}… verified${terms}`,
    );
    for (const line of p.content.split('\n')) lines.push(`       ${line}`);
  }
  lines.push(
    `     this prompt with folding: ${q.tokens_with_folding} tokens (question ${q.prompt_tokens} + pages ${q.tokens_with_folding - q.prompt_tokens}); without: ${n(raw + q.prompt_tokens)}`,
  );
  return lines;
}

/** The human rendering of one demo phase. */
function render(d: DemoPhase, raw: { tokens: number }): string[] {
  switch (d.phase) {
    case 'fold':
      raw.tokens = d.raw_history_tokens;
      return [
        `1. Fold: ${d.folded} turns of a coding session moved to hash-verified cold storage in ${(d.fold_ms / 1000).toFixed(1)} s.`,
        `   Without folding, every prompt carries the raw history: ${n(d.raw_history_tokens)} tokens.`,
      ];
    case 'recall':
      return [
        `\n2. Recall "${DEMO_QUESTIONS.recall}": an explicit search, newest first, labelled (CONF-04)`,
        ...d.recall.candidates
          .filter((c) => c.status !== 'related')
          .map(
            (c) => `   step ${String(c.step_id).padStart(3)}  ${c.status.padEnd(20)} ${c.summary}`,
          ),
      ];
    case 'question':
      return questionLines(d.question, raw.tokens);
    case 'evict':
      return [
        `\n4. After each answer its pages are evicted (CONF-07): ${d.evict.evictions_recorded} evictions recorded.`,
        `   The next prompt, "${DEMO_QUESTIONS.next}", pages ${d.evict.next_pages.length === 0 ? 'nothing' : d.evict.next_pages.join(', ')}: ${d.evict.next_tokens} tokens.`,
      ];
    case 'tamper':
      return [
        `\n5. One byte of step ${d.tamper.step_id} is changed on disk; hydrate refuses it (CONF-09):`,
        `   ${d.tamper.error}`,
      ];
    case 'validate':
      return [
        `\n6. validate: ${d.validate.ok ? 'ok' : `${d.validate.problems.length} problem(s)`} in ${d.validate.checked} nodes`,
        ...d.validate.problems.map((p) => `   ${p.kind}: ${p.message}`),
      ];
  }
}

/** `contextfold demo`. */
export function register(program: Command): void {
  program
    .command('demo')
    .option('--keep', 'keep the temporary store and print its path')
    .addHelpText(
      'after',
      [
        '',
        'Runs in the default retrieval mode (ranked); --retrieval reference runs the IPCF RGSC.',
        'The store is removed at the end unless --keep is given (then its path is printed, and',
        'with --json it is the "dir" field). Nothing is written outside that temporary store.',
        '',
        'Examples:',
        '  contextfold demo',
        '  contextfold demo --keep --json | jq .dir',
      ].join('\n'),
    )
    .action(async (opts: { keep?: boolean }, cmd: Command) => {
      const g = globals(cmd);
      const { retrieval } = engineOptions(cmd);
      const root = makeTempDir('contextfold-demo-');
      const dir = join(root, '.contextfold');
      const raw = { tokens: 0 };
      let asked = 0;
      // Paths inside the temporary store are shown relative to it: it is gone after the run.
      const prefix = `${root}${sep}`;
      const relative = (text: string) => (opts.keep ? text : text.replaceAll(prefix, ''));
      const say = (lines: string[]) => {
        if (!g.json) process.stdout.write(`${relative(lines.join('\n'))}\n`);
      };
      try {
        const mode = retrieval ?? 'ranked';
        say([
          `contextfold demo: a synthetic 500-turn coding session (8 turns that matter among 492 routine ones); retrieval ${mode}\n`,
        ]);
        const report = await runDemo({
          dir,
          ...(retrieval ? { retrieval } : {}),
          onPhase: (d) => {
            if (d.phase === 'question' && ++asked === 1) {
              say([
                '\n3. Questions: before each model call the prompt is scanned and the archived turns it needs are paged back in, verified against their hashes (CONF-13):',
              ]);
            }
            say(render(d, raw));
          },
        });
        const sizes = report.questions.map((q) => q.tokens_with_folding);
        say([
          `\nRaw history ${n(report.raw_history_tokens)} tokens per prompt → with folding ${Math.min(...sizes)}–${Math.max(...sizes)} tokens per prompt here (the question and its verified pages; your system prompt and recent turns come on top).`,
          ...(opts.keep ? [`store kept at ${dir}`] : []),
        ]);
        if (g.json) {
          const text = JSON.stringify({ ...report, dir: opts.keep ? dir : null });
          const escaped = JSON.stringify(prefix).slice(1, -1);
          process.stdout.write(`${opts.keep ? text : text.replaceAll(escaped, '')}\n`);
        }
      } finally {
        if (!opts.keep) rmSync(root, { recursive: true, force: true });
      }
    });
}
