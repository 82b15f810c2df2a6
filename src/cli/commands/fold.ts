import { readFileSync } from 'node:fs';
import type { Command } from 'commander';
import type { FoldInput, FoldResult } from '../../engine/types.js';
import { UsageError } from '../../protocol/errors.js';
import { emit, globals, parseIntArg, parseList } from '../context.js';
import { NO_REDACT_FLAG, NO_REDACT_HELP, withEngine } from '../engine-options.js';
import { progressBar } from '../progress.js';

function readInput(path: string): Buffer {
  try {
    return path === '-' ? readFileSync(0) : readFileSync(path);
  } catch (e) {
    throw new UsageError(
      `cannot read ${path === '-' ? 'standard input' : path}: ${(e as NodeJS.ErrnoException).code ?? e}`,
    );
  }
}

/** First meaningful line of a payload, as a fallback summary for batch lines without one. */
function firstLine(text: string): string {
  const line = text.split('\n').find((l) => l.trim().length > 0) ?? '';
  const t = line.trim();
  return t.length > 200 ? `${t.slice(0, 199)}…` : t;
}

/**
 * Parses a batch JSONL file: `{step_id, summary?, content | raw_content, files?, commands?,
 * errors?}` per line. Everything is validated before anything is folded.
 */
export function parseFoldJsonl(text: string, source: string): FoldInput[] {
  const inputs: FoldInput[] = [];
  const lines = text.split('\n');
  lines.forEach((raw, i) => {
    if (raw.trim() === '') return;
    const where = `${source}:${i + 1}`;
    let o: Record<string, unknown>;
    try {
      o = JSON.parse(raw);
    } catch {
      throw new UsageError(`${where}: not valid JSON`);
    }
    if (typeof o !== 'object' || o === null || Array.isArray(o))
      throw new UsageError(`${where}: expected a JSON object`);
    const step = o.step_id;
    if (typeof step !== 'number' || !Number.isSafeInteger(step) || step < 0) {
      throw new UsageError(`${where}: step_id must be a non-negative integer`);
    }
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
    inputs.push({
      stepId: step,
      summary:
        (o.summary as string | undefined) ?? firstLine((content as string | undefined) ?? ''),
      content: content as string | undefined,
      files: o.files as string[] | undefined,
      commands: o.commands as string[] | undefined,
      errors: o.errors as string[] | undefined,
    });
  });
  return inputs;
}

const human = (
  r: FoldResult | { folded: number; already_folded: number; results: FoldResult[] },
): string => {
  if ('results' in r)
    return `folded ${r.folded} turn(s)${r.already_folded ? `, ${r.already_folded} already folded` : ''}`;
  return `${r.already_folded ? 'already folded' : 'folded'} step ${r.step_id} → ${r.file_path}\n  payload_sha256    ${r.payload_sha256}\n  projection_sha256 ${r.projection_sha256}\n  artifact_sha256   ${r.artifact_sha256}`;
};

/** `contextfold fold`. */
export function register(program: Command): void {
  program
    .command('fold')
    .description('fold a turn (or a JSONL batch) into cold storage')
    .argument('[STEP]', 'step id: the turn position in the conversation history')
    .argument('[SUMMARY]', 'one-line summary of the turn')
    .option('--file <PATH>', "raw payload file, or '-' for standard input (bytes kept exactly)")
    .option('--files <LIST>', 'explicit comma-separated file list (replaces extraction)')
    .option('--commands <LIST>', 'explicit comma-separated command list')
    .option('--errors <LIST>', 'explicit comma-separated error list')
    .option('--jsonl <FILE>', 'batch: one {step_id, summary?, content|raw_content} per line')
    .option(NO_REDACT_FLAG, NO_REDACT_HELP)
    .addHelpText(
      'after',
      '\nExamples:\n  contextfold fold 42 "PostgreSQL configured on port 5433" --file turn42.log\n  contextfold fold --jsonl turns.jsonl --json',
    )
    .action(async (step: string | undefined, summary: string | undefined, opts, cmd: Command) => {
      const g = globals(cmd);
      if (opts.jsonl !== undefined) {
        if (step !== undefined)
          throw new UsageError('give either STEP SUMMARY or --jsonl FILE, not both');
        const inputs = parseFoldJsonl(readInput(opts.jsonl).toString('utf8'), opts.jsonl);
        const bar = progressBar('folding');
        const results = await withEngine(
          cmd,
          (cf) => cf.foldMany(inputs, (d, t) => bar.update(d, t)),
          { write: true },
        );
        bar.done();
        const already = results.filter((r) => r.already_folded).length;
        emit(g, { folded: results.length - already, already_folded: already, results }, human);
        return;
      }
      if (step === undefined || summary === undefined) {
        throw new UsageError(
          'fold needs STEP and SUMMARY (or --jsonl FILE); see contextfold fold --help',
        );
      }
      const input: FoldInput = {
        stepId: parseIntArg(step, 'STEP'),
        summary,
        content: opts.file !== undefined ? readInput(opts.file) : undefined,
        files: parseList(opts.files),
        commands: parseList(opts.commands),
        errors: parseList(opts.errors),
      };
      const r = await withEngine(cmd, (cf) => cf.fold(input), { write: true });
      emit(g, r, human);
    });
}
