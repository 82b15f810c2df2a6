import type { Command } from 'commander';
import type { ContextFoldEngine, FoldInput, FoldResult } from '../../engine/types.js';
import type { TurnsRow } from '../../import/turns-jsonl.js';
import { UsageError } from '../../protocol/errors.js';
import { emit, globals, parseIntArg, parseList } from '../context.js';
import { NO_REDACT_FLAG, NO_REDACT_HELP, withEngine } from '../engine-options.js';
import { helpText } from '../help-text.js';
import { readInput, textArg } from '../input.js';
import { phasedProgress } from '../progress.js';

/** First meaningful line of a payload, as a fallback summary for batch lines without one. */
function firstLine(text: string): string {
  const line = text.split('\n').find((l) => l.trim().length > 0) ?? '';
  const t = line.trim();
  return t.length > 200 ? `${t.slice(0, 199)}…` : t;
}

/** One batch line: its fold input, and whether its summary is still to be made from the payload. */
interface BatchRow {
  input: FoldInput;
  summaryFromPayload: boolean;
}

/** One batch line as a fold input; the shared turns reader has checked the JSON and `step_id`. */
function foldRow({ row: o, step_id, where }: TurnsRow): BatchRow {
  const content = o.content ?? o.raw_content;
  if (content !== undefined && typeof content !== 'string')
    throw new UsageError(`${where}: content must be a string`);
  if (o.summary !== undefined && typeof o.summary !== 'string')
    throw new UsageError(`${where}: summary must be a string`);
  for (const k of ['files', 'commands', 'errors']) {
    const v = o[k];
    if (v !== undefined && (!Array.isArray(v) || v.some((x) => typeof x !== 'string'))) {
      throw new UsageError(`${where}: ${k} must be an array of strings`);
    }
  }
  return {
    input: {
      stepId: step_id,
      summary: (o.summary as string | undefined) ?? '',
      content: content as string | undefined,
      files: o.files as string[] | undefined,
      commands: o.commands as string[] | undefined,
      errors: o.errors as string[] | undefined,
    },
    summaryFromPayload: o.summary === undefined,
  };
}

/**
 * The batch's fold inputs, a missing summary made from the payload as the store will keep it
 * (redacted, each on its own as `foldMany` does, so a summary never depends on the batch): the
 * first line of the text as given, cut at 200 characters, could cut a secret short
 * (`token ghp_u8jz…`), and a secret cut short no longer matches its pattern when the fold
 * redacts the summary.
 */
async function withSummaries(
  engine: Pick<ContextFoldEngine, 'redactTexts'>,
  rows: readonly BatchRow[],
): Promise<FoldInput[]> {
  const out: FoldInput[] = [];
  for (const r of rows) {
    if (!r.summaryFromPayload) out.push(r.input);
    else {
      const [stored] = await engine.redactTexts([(r.input.content as string | undefined) ?? '']);
      out.push({ ...r.input, summary: firstLine(stored!) });
    }
  }
  return out;
}

/**
 * Parses a batch JSONL file: `{step_id, summary?, content | raw_content, files?, commands?,
 * errors?}` per line, in any step order. Everything is validated before anything is folded.
 * The turns reader (and the session-message schemas it reads history records with) loads only
 * for a batch: a single `contextfold fold`, run once per turn by scripts, does not pay for it.
 */
async function parseFoldJsonl(text: string, source: string): Promise<BatchRow[]> {
  const { parseTurnsJsonl } = await import('../../import/turns-jsonl.js');
  return parseTurnsJsonl(text, {
    source,
    stepIds: 'any',
    parseRow: foldRow,
    rowShape: '{"step_id","summary","content"}',
  });
}

/**
 * The human line of a fold. A single fold names the node where it is (`at`: the file under the
 * store directory, or the database address), not the record's `file_path`, which is relative to
 * the store's parent and reads `.contextfold/cold_nodes/…` whatever `--dir` is.
 */
const human = (
  r: FoldResult | { folded: number; already_folded: number; results: FoldResult[] },
  at = '',
): string => {
  if ('results' in r)
    return `folded ${r.folded} turn(s)${r.already_folded ? `, ${r.already_folded} already folded` : ''}`;
  return `${r.already_folded ? 'already folded' : 'folded'} step ${r.step_id} → ${at}\n  payload_sha256    ${r.payload_sha256}\n  projection_sha256 ${r.projection_sha256}\n  artifact_sha256   ${r.artifact_sha256}`;
};

const SUMMARY_IS_PAYLOAD =
  'note: no --file, so the summary is the archived payload (pass --file PATH or --file - for the turn text)';

const HELP = helpText({
  notes: [
    "Without --file, the SUMMARY itself is archived as the turn's payload (the IPCF rule: an empty",
    "raw_content means the summary is the payload), and the human output says so. Pass the turn's",
    'full text with --file PATH (or --file - for standard input); its bytes are kept exactly.',
    "SUMMARY may be '-' (standard input) or come from --summary-file FILE; only one of SUMMARY and",
    '--file can read standard input. The store is created if it does not exist.',
    '',
  ],
  examples: [
    'contextfold fold 42 "PostgreSQL configured on port 5433" --file turn42.log',
    `printf 'docker compose up -d postgres\\n' | contextfold fold 43 "Started postgres" --file -`,
    'contextfold fold --jsonl turns.jsonl --json',
  ],
});

/** `contextfold fold`. */
export function register(program: Command): void {
  program
    .command('fold')
    .argument('[STEP]', 'step id: the turn position in the conversation history')
    .argument('[SUMMARY]', "one-line summary of the turn, or '-' to read it from standard input")
    .option('--file <PATH>', "raw payload file, or '-' for standard input (bytes kept exactly)")
    .option('--summary-file <FILE>', 'read SUMMARY from a file')
    .option('--files <LIST>', 'explicit comma-separated file list (replaces extraction)')
    .option('--commands <LIST>', 'explicit comma-separated command list')
    .option('--errors <LIST>', 'explicit comma-separated error list')
    .option(
      '--jsonl <FILE>',
      'batch: one {step_id, summary?, content|raw_content} per line (- for standard input)',
    )
    .option(NO_REDACT_FLAG, NO_REDACT_HELP)
    .addHelpText('after', HELP)
    .action(async (step: string | undefined, summary: string | undefined, opts, cmd: Command) => {
      const g = globals(cmd);
      if (opts.jsonl !== undefined) {
        if (step !== undefined)
          throw new UsageError('give either STEP SUMMARY or --jsonl FILE, not both');
        const rows = await parseFoldJsonl(readInput(opts.jsonl).toString('utf8'), opts.jsonl);
        const bar = phasedProgress({ preparing: 'redacting', writing: 'folding' });
        const results = await withEngine(
          cmd,
          async (cf) =>
            cf.foldMany(await withSummaries(cf, rows), (d, t, phase) => bar.update(d, t, phase)),
          { write: true, create: true },
        );
        bar.done();
        const already = results.filter((r) => r.already_folded).length;
        emit(g, { folded: results.length - already, already_folded: already, results }, human);
        return;
      }
      if (step === undefined || (summary === undefined && opts.summaryFile === undefined)) {
        throw new UsageError(
          'fold needs STEP and SUMMARY (or --jsonl FILE); see contextfold fold --help',
        );
      }
      if (summary === '-' && opts.file === '-') {
        throw new UsageError(
          'only one of SUMMARY and --file can read standard input: give the other as text or a file',
        );
      }
      const stepId = parseIntArg(step, 'STEP');
      const input: FoldInput = {
        stepId,
        summary: textArg({
          value: summary,
          file: opts.summaryFile,
          name: 'SUMMARY',
          fileOption: '--summary-file',
        }),
        content: opts.file !== undefined ? readInput(opts.file) : undefined,
        files: parseList(opts.files),
        commands: parseList(opts.commands),
        errors: parseList(opts.errors),
      };
      const { r, at } = await withEngine(
        cmd,
        async (cf) => ({ r: await cf.fold(input), at: cf.backend.nodePath(stepId) }),
        { write: true, create: true },
      );
      emit(g, r, (x: FoldResult) =>
        opts.file === undefined ? `${human(x, at)}\n${SUMMARY_IS_PAYLOAD}` : human(x, at),
      );
    });
}
