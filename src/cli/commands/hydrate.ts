import type { Command } from 'commander';
import type { HydrateResult } from '../../engine/types.js';
import { UsageError } from '../../protocol/errors.js';
import { emit, globals, parseIntArg } from '../context.js';
import { withEngine } from '../engine-options.js';
import { helpText } from '../help-text.js';

const human = (r: HydrateResult): string => {
  const head = `# step ${r.step_id} · chunk ${r.chunk + 1}/${r.chunks} · ${r.tokens} tokens · payload_sha256 ${r.payload_sha256} · verified`;
  const tail = r.truncated
    ? `\n# truncated: ${r.chunks} chunks; next: contextfold hydrate ${r.step_id} --chunk ${Math.min(r.chunk + 1, r.chunks - 1)}`
    : '';
  return `${head}\n${r.content}${tail}`;
};

const HELP = helpText({
  examples: ['contextfold hydrate 137', 'contextfold hydrate 137 --raw > turn137.log'],
});

/**
 * `--raw` writes the payload's bytes whole: a JSON object or a chunk of it is another output,
 * so asking for both is a usage error rather than one of them silently ignored.
 */
function refuseWithRaw(cmd: Command): void {
  if (globals(cmd).json) {
    throw new UsageError('give --raw or --json, not both (--json has the text as "content")');
  }
  if (cmd.getOptionValueSource('chunk') === 'cli') {
    throw new UsageError('--raw writes the whole payload: leave out --chunk');
  }
}

/** `contextfold hydrate`. */
export function register(program: Command): void {
  program
    .command('hydrate')
    .argument('<STEP>', 'step id')
    .option('--chunk <K>', 'chunk index (0-based) when the payload is over the per-call cap', '0')
    .option(
      '--raw',
      'write the exact payload bytes to stdout (no cap, no framing; not with --json or --chunk)',
    )
    .addHelpText('after', HELP)
    .action(async (step: string, opts: { chunk: string; raw?: boolean }, cmd: Command) => {
      const id = parseIntArg(step, 'STEP');
      if (opts.raw) {
        refuseWithRaw(cmd);
        const bytes = await withEngine(cmd, (cf) => cf.hydrateBytes(id));
        await new Promise<void>((res, rej) =>
          process.stdout.write(bytes, (e) => (e ? rej(e) : res())),
        );
        return;
      }
      const chunk = parseIntArg(opts.chunk, '--chunk');
      const r = await withEngine(cmd, (cf) => cf.hydrate(id, { chunk }));
      emit(globals(cmd), r, human);
    });
}
