import { appendFileSync, existsSync, mkdirSync, readFileSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import { performance } from 'node:perf_hooks';
import { gunzipSync } from 'node:zlib';
import { z } from 'zod';
import { compareCodePoints } from '../../protocol/canonical-json.js';
import { UsageError } from '../../protocol/errors.js';
import { makeTempDir } from '../../store/temp-dir.js';
import { runHook } from './run-hook.js';

/** zod schema of one hook probe: a post-compaction prompt about a pre-compaction fact. */
const probeSchema = z
  .object({
    id: z.string().min(1),
    /** File name of a Claude Code transcript (plain or gzipped JSONL) in the transcripts dir. */
    transcript: z.string().min(1),
    /** The prompt is submitted after the first `after_line` lines of the transcript. */
    after_line: z.number().int().positive(),
    prompt: z.string().min(1),
    /** The exact string the paged-in context must contain. */
    answer: z.string().min(1),
    /** The hook's step (transcript turn) that holds the answer, for reference. */
    source_step: z.number().int().nonnegative(),
  })
  .strict();

/** One hook probe. */
export type HookProbe = z.infer<typeof probeSchema>;

const fileSchema = z
  .object({ version: z.literal(1), probes: z.array(probeSchema).min(1) })
  .strict();

/** The lines of a transcript (gunzipped when its name ends in `.gz`), without terminators. */
export function transcriptLines(path: string): string[] {
  let raw: Buffer;
  try {
    raw = readFileSync(path);
  } catch (e) {
    const code = (e as NodeJS.ErrnoException).code ?? 'unreadable';
    throw new UsageError(`cannot read transcript ${path} (${code}); check --transcripts`, { path });
  }
  const text = (path.endsWith('.gz') ? gunzipSync(raw) : raw).toString('utf8');
  const lines = text.split('\n');
  if (lines.at(-1) === '') lines.pop();
  return lines;
}

/** 0-based indices of the lines that record a compaction (`compact_boundary`). */
export function compactionLines(lines: readonly string[]): number[] {
  const out: number[] = [];
  lines.forEach((line, i) => {
    if (!line.includes('compact_boundary')) return;
    try {
      const r = JSON.parse(line) as { type?: unknown; subtype?: unknown };
      if (r.type === 'system' && r.subtype === 'compact_boundary') out.push(i);
    } catch {
      // Not a record: not a boundary.
    }
  });
  return out;
}

/**
 * Reads and validates a probe file (`{ version: 1, probes: [...] }`): schema, unique ids, every
 * transcript present, every probe asked after a compaction and within its transcript.
 *
 * @example
 * loadHookProbes('eval/hook-probes.json', '../shared/data/raw/claude-code').length; // 16
 */
export function loadHookProbes(path: string, transcriptsDir: string): HookProbe[] {
  let json: unknown;
  try {
    json = JSON.parse(readFileSync(path, 'utf8'));
  } catch (e) {
    const code = (e as NodeJS.ErrnoException).code;
    throw new UsageError(
      code ? `cannot read probes file ${path} (${code})` : `probes file ${path} is not valid JSON`,
      { path },
    );
  }
  const r = fileSchema.safeParse(json);
  if (!r.success) {
    const issue = r.error.issues[0];
    throw new UsageError(
      `probes file ${path}: ${issue?.path.join('.') || '(root)'}: ${issue?.message}`,
    );
  }
  const seen = new Set<string>();
  const lengths = new Map<string, { n: number; compactions: number[] }>();
  for (const p of r.data.probes) {
    if (seen.has(p.id)) throw new UsageError(`probes file ${path}: duplicate id '${p.id}'`);
    seen.add(p.id);
    let info = lengths.get(p.transcript);
    if (!info) {
      const lines = transcriptLines(join(transcriptsDir, p.transcript));
      info = { n: lines.length, compactions: compactionLines(lines) };
      lengths.set(p.transcript, info);
    }
    if (p.after_line > info.n) {
      throw new UsageError(
        `probe ${p.id}: after_line ${p.after_line} is past the end of ${p.transcript} (${info.n} lines)`,
      );
    }
    if (!info.compactions.some((c) => c < p.after_line)) {
      throw new UsageError(
        `probe ${p.id}: after_line ${p.after_line} is before the first compaction of ${p.transcript}`,
      );
    }
  }
  return r.data.probes;
}

/** One probe's outcome. */
export interface HookProbeRow {
  id: string;
  transcript: string;
  /** The answer occurs in `additionalContext`. */
  hit: boolean;
  /** UTF-8 bytes of `additionalContext` (0 when the hook printed nothing). */
  bytes: number;
  pages: number[];
  archived_before: number;
  /** Wall time of the warm hook run for this prompt, ms (not deterministic). */
  ms: number;
}

/** Summary of a hook eval. */
export interface HookEvalSummary {
  probes: number;
  hit_rate: number;
  mean_bytes: number;
  max_bytes: number;
  no_context_rate: number;
  by_transcript: Record<string, { probes: number; hits: number }>;
  warm_ms: { p50: number; max: number };
}

/** Result of {@link runHookEval}. */
export interface HookEvalResult {
  mode: string;
  summary: HookEvalSummary;
  rows: HookProbeRow[];
}

/** Options of {@link runHookEval}. */
export interface HookEvalOptions {
  probes: readonly HookProbe[];
  transcriptsDir: string;
  /** Retrieval of the hook's engine (default: the hook's own default, ranked). */
  retrieval?: 'ranked' | 'reference';
  workDir?: string;
}

function summarise(rows: readonly HookProbeRow[]): HookEvalSummary {
  const n = rows.length;
  const by: Record<string, { probes: number; hits: number }> = {};
  for (const t of [...new Set(rows.map((r) => r.transcript))].sort(compareCodePoints)) {
    const rs = rows.filter((r) => r.transcript === t);
    by[t] = { probes: rs.length, hits: rs.filter((r) => r.hit).length };
  }
  const ms = rows.map((r) => r.ms).sort((a, b) => a - b);
  return {
    probes: n,
    hit_rate: n === 0 ? 0 : rows.filter((r) => r.hit).length / n,
    mean_bytes: n === 0 ? 0 : rows.reduce((s, r) => s + r.bytes, 0) / n,
    max_bytes: rows.reduce((m, r) => Math.max(m, r.bytes), 0),
    no_context_rate: n === 0 ? 0 : rows.filter((r) => r.bytes === 0).length / n,
    by_transcript: by,
    warm_ms: {
      p50: Math.round((ms[Math.max(0, Math.ceil(n / 2) - 1)] ?? 0) * 10) / 10,
      max: Math.round((ms.at(-1) ?? 0) * 10) / 10,
    },
  };
}

/**
 * Replays Claude Code transcripts through the real hook (`runHook`, the function the `hook`
 * command runs): lines are appended to a transcript file as Claude Code writes them; at each
 * compaction boundary the `pre-compact` and `session-start` (source `compact`) events run; at
 * each probe's line its prompt is submitted (`user-prompt-submit`) and the returned
 * `additionalContext` is scored: the answer string is in it or not, and its size in bytes.
 *
 * @example
 * const r = await runHookEval({ probes: loadHookProbes(file, dir), transcriptsDir: dir });
 * r.summary.hit_rate;
 */
export async function runHookEval(options: HookEvalOptions): Promise<HookEvalResult> {
  const work = makeTempDir('cf-hook-eval-', options.workDir);
  const rows: HookProbeRow[] = [];
  try {
    const names = [...new Set(options.probes.map((p) => p.transcript))].sort(compareCodePoints);
    for (const [i, name] of names.entries()) {
      const probes = options.probes
        .filter((p) => p.transcript === name)
        .sort((a, b) => a.after_line - b.after_line || compareCodePoints(a.id, b.id));
      rows.push(...(await replay(name, probes, join(work, String(i)), options)));
    }
  } finally {
    rmSync(work, { recursive: true, force: true });
  }
  const byId = new Map(rows.map((r) => [r.id, r]));
  const ordered = options.probes.map((p) => byId.get(p.id)!);
  return { mode: options.retrieval ?? 'ranked', summary: summarise(ordered), rows: ordered };
}

async function replay(
  name: string,
  probes: readonly HookProbe[],
  dir: string,
  options: HookEvalOptions,
): Promise<HookProbeRow[]> {
  const lines = transcriptLines(join(options.transcriptsDir, name));
  const boundaries = compactionLines(lines);
  mkdirSync(dir, { recursive: true });
  const transcriptPath = join(dir, 'transcript.jsonl');
  const baseDir = join(dir, '.contextfold');
  const sessionId = `probe-${name.replace(/[^A-Za-z0-9._-]/gu, '_').slice(0, 80)}`;
  const engine = options.retrieval ? { retrieval: options.retrieval } : undefined;
  const input = { session_id: sessionId, transcript_path: transcriptPath, cwd: dir };
  let written = 0;
  const writeTo = (end: number) => {
    if (end <= written) return;
    appendFileSync(transcriptPath, `${lines.slice(written, end).join('\n')}\n`);
    written = end;
  };
  const run = (event: 'user-prompt-submit' | 'pre-compact' | 'session-start', extra = {}) =>
    runHook({ event, input: { ...input, ...extra }, baseDir, ...(engine ? { engine } : {}) });
  const out: HookProbeRow[] = [];
  let nextBoundary = 0;
  for (const p of probes) {
    while (nextBoundary < boundaries.length && boundaries[nextBoundary]! < p.after_line) {
      writeTo(boundaries[nextBoundary]!);
      await run('pre-compact', { trigger: 'auto' });
      writeTo(boundaries[nextBoundary]! + 1);
      await run('session-start', { source: 'compact' });
      nextBoundary++;
    }
    writeTo(p.after_line);
    if (!existsSync(transcriptPath)) appendFileSync(transcriptPath, '');
    const t0 = performance.now();
    const r = await run('user-prompt-submit', { prompt: p.prompt });
    const ms = performance.now() - t0;
    const context = r.output?.hookSpecificOutput?.additionalContext ?? '';
    out.push({
      id: p.id,
      transcript: name,
      hit: context.includes(p.answer),
      bytes: Buffer.byteLength(context, 'utf8'),
      pages: r.context?.pages.map((x) => x.step_id) ?? [],
      archived_before: r.archived_before,
      ms,
    });
  }
  return out;
}
