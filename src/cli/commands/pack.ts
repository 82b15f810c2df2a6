import { existsSync } from 'node:fs';
import type { Command } from 'commander';
import { renderPackForHuman } from '../../harness/inspect.js';
import { type ContextPack, renderPackText } from '../../harness/pack.js';
import { replaySession } from '../../harness/replay.js';
import { eventsPath } from '../../harness/session-events.js';
import { IntegrityCheckError } from '../../protocol/ipcf-errors.js';
import { shownStore } from '../../store/pg/pg-url.js';
import { emit, globals, parseIntArg, requireStore } from '../context.js';
import { helpText } from '../help-text.js';

const HELP = helpText({
  notes: [
    'The pack is rebuilt from <dir>/events.jsonl (history + decisions) and the store, with every',
    'page re-verified; nothing is written. If the log and the store disagree the command fails.',
    'With --json the whole pack is printed: messages, entries (layer, tokens) and metadata.',
    '',
  ],
  examples: [
    'contextfold pack --at 120',
    'contextfold pack --at 120 --explain',
    'contextfold pack --json | jq .metadata.paged_in',
  ],
});

/** `contextfold pack`. */
export function register(program: Command): void {
  program
    .command('pack')
    .option(
      '--at <STEP>',
      'the pack whose prompt is at this history position (default: the last one)',
    )
    .option('--explain', 'show the layers, budget and decisions instead of the prompt text')
    .addHelpText('after', HELP)
    .action(async (opts: { at?: string; explain?: boolean }, cmd: Command) => {
      const g = globals(cmd);
      // A session store may hold only its log (nothing folded yet); without either, say so.
      if (!existsSync(eventsPath(g.dir))) requireStore(g.dir);
      const at = opts.at === undefined ? undefined : parseIntArg(opts.at, '--at');
      const r = await replaySession({ dir: g.dir, ...(at !== undefined ? { atStep: at } : {}) });
      if (!r.matches) {
        const m = r.mismatch!;
        throw new IntegrityCheckError(
          `the session log and the store disagree at event ${m.index + 1} of ${shownStore(g.dir)}/events.jsonl (${whereTheyDiffer(m.recorded, m.replayed)}); the pack cannot be reproduced`,
          { path: `${shownStore(g.dir)}/events.jsonl` },
        );
      }
      const pack = r.packs[r.packs.length - 1];
      if (!pack) {
        process.stdout.write('the session has no turns yet\n');
        return;
      }
      emit(g, pack, (p: ContextPack) => (opts.explain ? renderPackForHuman(p) : renderPackText(p)));
    });
}

/**
 * The recorded and the rebuilt event around their first difference, so that a long event that
 * differs late (a step list at its end) shows the difference instead of two equal prefixes.
 */
export function whereTheyDiffer(
  recorded: string | null | undefined,
  rebuilt: string | null | undefined,
): string {
  if (recorded == null || rebuilt == null) {
    return `recorded ${recorded?.slice(0, 120) ?? 'nothing'}, rebuilt ${rebuilt?.slice(0, 120) ?? 'nothing'}`;
  }
  let i = 0;
  while (i < recorded.length && recorded[i] === rebuilt[i]) i++;
  const from = Math.max(0, i - 40);
  const cut = (t: string) =>
    `${from > 0 ? '…' : ''}${t.slice(from, from + 120)}${t.length > from + 120 ? '…' : ''}`;
  return `recorded ${cut(recorded)}, rebuilt ${cut(rebuilt)}`;
}
