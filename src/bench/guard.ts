import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { Redactor } from '../guard/redactor.js';
import { scanPage } from '../guard/scan-page.js';
import { loadGuardTables } from '../guard/tables.js';

const TRAJECTORIES = fileURLToPath(new URL('../../../shared/data/trajectories/', import.meta.url));

function quantile(xs: number[], q: number): number {
  const s = [...xs].sort((a, b) => a - b);
  return s[Math.min(s.length - 1, Math.floor(q * s.length))]!;
}

const us = (ms: number) => Number((ms * 1000).toFixed(1));

/** Every turn's content of the shared trajectories (the false-positive corpus). */
function trajectoryTurns(): { file: string; step: number; content: string }[] {
  if (!existsSync(TRAJECTORIES)) return [];
  const out: { file: string; step: number; content: string }[] = [];
  for (const file of readdirSync(TRAJECTORIES).sort()) {
    for (const line of readFileSync(join(TRAJECTORIES, file), 'utf8').split('\n')) {
      if (line.trim() === '') continue;
      const t = JSON.parse(line) as { step_id: number; content: unknown };
      out.push({ file, step: t.step_id, content: String(t.content) });
    }
  }
  return out;
}

/** 2 KB windows of real text: the unit the overhead target is stated in. */
function windows2k(turns: { content: string }[]): string[] {
  const out: string[] = [];
  for (const t of turns) {
    for (let i = 0; i + 2048 <= t.content.length && out.length < 4000; i += 2048) {
      out.push(t.content.slice(i, i + 2048));
    }
  }
  return out;
}

async function perText(
  redactor: Redactor,
  texts: string[],
): Promise<{ p50_us: number; mean_us: number }> {
  for (const t of texts.slice(0, 200)) await redactor.redactText(t); // warm up
  const times: number[] = [];
  for (const t of texts) {
    const start = performance.now();
    await redactor.redactText(t);
    times.push(performance.now() - start);
  }
  const mean = times.reduce((a, b) => a + b, 0) / times.length;
  return { p50_us: us(quantile(times, 0.5)), mean_us: us(mean) };
}

/**
 * Milliseconds to redact 256 KB and 1 MB of `token ` repeated, a match every few dozen bytes:
 * stop 46 took the reports of secretlint's rules out of `lintSource`'s clean-up, which compared
 * every message with every later one (256 KB of AWS key ids took 95 s before).
 */
async function repeatedMatches(redactor: Redactor, token: string): Promise<Record<string, number>> {
  const out: Record<string, number> = {};
  for (const [label, size] of [
    ['256KB', 1 << 18],
    ['1MB', 1 << 20],
  ] as const) {
    const text = `${token} `.repeat(Math.ceil(size / (token.length + 1))).slice(0, size);
    const start = performance.now();
    await redactor.redactText(text);
    out[label] = Math.round(performance.now() - start);
  }
  return out;
}

/**
 * The guard's figures: redaction cost per 2 KB of real turn text (with the prefilter, without
 * it, and on text holding a secret), redaction of 256 KB and 1 MB of repeated tokens, page-scan
 * cost, and the false-positive report: every turn
 * of ../shared/data/trajectories scanned with every table, findings per pattern. Those
 * sessions were redacted upstream, so every secret finding there is a false positive.
 */
export async function benchGuard(): Promise<unknown> {
  const turns = trajectoryTurns();
  if (turns.length === 0) return { error: `${TRAJECTORIES} is missing` };
  const tables = loadGuardTables();
  const redactor = new Redactor({ tables });
  const unfiltered = new Redactor({ tables, prefilter: false });
  const texts = windows2k(turns);
  // A token shape that passes the secretlint prefilter, assembled here (no literal in the repo).
  const token = ['gh', 'p_', 'x'.repeat(36)].join('');
  const withSecret = texts
    .slice(0, 500)
    .map((t) => `${t.slice(0, 1000)} ${token} ${t.slice(1000 + token.length + 2)}`);

  const perPattern: Record<string, { findings: number; turns: number }> = {};
  let disagreements = 0;
  let secretTurns = 0;
  const pageTimes: number[] = [];
  for (const t of turns) {
    const ids = new Set<string>();
    const a = await redactor.redactText(t.content);
    const b = await unfiltered.redactText(t.content);
    if (a.text !== b.text) disagreements++;
    if (a.redactions.length > 0) secretTurns++;
    for (const r of a.redactions) {
      for (const id of [r.pattern_id, ...(r.merged_pattern_ids ?? [])]) {
        perPattern[id] ??= { findings: 0, turns: 0 };
        perPattern[id].findings++;
        ids.add(id);
      }
    }
    const start = performance.now();
    const page = scanPage(t.content, tables);
    pageTimes.push(performance.now() - start);
    for (const f of page) {
      perPattern[f.pattern_id] ??= { findings: 0, turns: 0 };
      perPattern[f.pattern_id]!.findings++;
      ids.add(f.pattern_id);
    }
    for (const id of ids) perPattern[id]!.turns++;
  }
  const sorted = Object.fromEntries(
    Object.entries(perPattern).sort(([x], [y]) => (x < y ? -1 : 1)),
  );
  return {
    trajectories: {
      files: new Set(turns.map((t) => t.file)).size,
      turns: turns.length,
      bytes: turns.reduce((n, t) => n + Buffer.byteLength(t.content, 'utf8'), 0),
    },
    redact_per_2kb_text: {
      texts: texts.length,
      prefiltered: await perText(redactor, texts),
      without_prefilter: await perText(unfiltered, texts),
      holding_a_secret: await perText(redactor, withSecret),
    },
    repeated_matches_ms: {
      github_token: await repeatedMatches(redactor, token),
      aws_access_key_id: await repeatedMatches(redactor, ['AK', 'IA', 'Z'.repeat(16)].join('')),
    },
    page_scan_per_turn_us: {
      p50: us(quantile(pageTimes, 0.5)),
      p99: us(quantile(pageTimes, 0.99)),
    },
    false_positives: {
      note: 'the trajectories were redacted upstream: every secret finding is a false positive; page findings are reported, not judged',
      turns_with_a_secret_finding: secretTurns,
      secret_false_positive_rate_per_turn: Number((secretTurns / turns.length).toFixed(5)),
      findings_per_pattern: sorted,
      prefilter_disagreements: disagreements,
    },
  };
}
