import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { MAX_DROPPED_TERMS } from '../../retrieval/ranked-query.js';
import { runCliProcess } from '../../test-utils/cli.js';
import { tempDir } from '../../test-utils/temp-dir.js';
import { SHOWN_DROPPED } from './scan.js';

const tmp = tempDir();
afterAll(() => tmp.cleanup());

/** The issue-9 store: the demo's turns 37, 91 and 137, and a billing-table turn at 120. */
function fourTurns(): string {
  const dir = join(tmp.dir, '.contextfold');
  const turns: [number, string, string][] = [
    [
      37,
      'PostgreSQL configured on Port 5433',
      '$ docker compose up -d postgres\nPostgreSQL running on port 5433',
    ],
    [
      91,
      'PostgreSQL switched to Port 5434 (conflict resolution)',
      '$ psql -p 5434 -U admin\nConflict resolved on port 5434',
    ],
    [
      137,
      'PostgreSQL port 5434 reverted back to Port 5433',
      "$ sed -i 's/5434/5433/' config.env\nPostgreSQL Port 5433 restored",
    ],
    [
      120,
      'Migration V12 rolled back due to deadlocks',
      'Deadlock detected in billing table; rolled back V12',
    ],
  ];
  for (const [step, summary, content] of turns) {
    const file = join(tmp.dir, `t${step}.log`);
    writeFileSync(file, content);
    expect(runCliProcess(['--dir', dir, 'fold', String(step), summary, '--file', file]).code).toBe(
      0,
    );
  }
  return dir;
}

describe('contextfold scan (default ranked) on a four-turn store', () => {
  const dir = fourTurns();

  it('pages step 137 for the port question and says which words it did not search for', () => {
    const r = runCliProcess(['--dir', dir, 'scan', 'What port are we using for PostgreSQL?']);
    expect(r.code).toBe(0);
    expect(r.stdout).toMatch(/query terms: port, postgr, postgresql, sql/);
    expect(r.stdout).toContain('not searched, stopwords: what, are, we, for');
    expect(r.stdout).toContain('not searched, in no folded turn: using');
    expect(r.stdout.split('\n').find((l) => l.includes('page in step'))).toContain('step 137');
    const json = JSON.parse(
      runCliProcess(['--dir', dir, '--json', 'scan', 'What port are we using for PostgreSQL?'])
        .stdout,
    );
    expect(json.selected[0].step_id).toBe(137);
    expect(json.dropped_terms).toContainEqual({ term: 'using', reason: 'not-in-store' });
  });

  it('names at most SHOWN_DROPPED dropped words per reason, and counts the rest (--json lists all)', () => {
    const words = Array.from({ length: 45 }, (_, i) => `zqx${i}`);
    const prompt = `What port are we using for PostgreSQL? ${words.join(' ')}`;
    const r = runCliProcess(['--dir', dir, 'scan', prompt]);
    expect(r.code).toBe(0);
    const line = r.stdout.split('\n').find((l) => l.startsWith('not searched, in no folded turn'));
    const json = JSON.parse(runCliProcess(['--dir', dir, '--json', 'scan', prompt]).stdout);
    const dropped = json.dropped_terms
      .filter((d: { reason: string }) => d.reason === 'not-in-store')
      .map((d: { term: string }) => d.term);
    expect(dropped.length).toBeGreaterThan(45);
    expect(line).toBe(
      `not searched, in no folded turn: ${dropped.slice(0, SHOWN_DROPPED).join(', ')} … and ${dropped.length - SHOWN_DROPPED} more (--json lists them)`,
    );
  });

  it('--json lists the first MAX_DROPPED_TERMS dropped words and counts the others', () => {
    // A pasted log dropped thousands of words, every one in the JSON (1.2 MB for 1.5 MB).
    const words = Array.from({ length: 3000 }, (_, i) => `zqy${i}w`);
    const prompt = `What port are we using for PostgreSQL? ${words.join(' ')}`;
    const r = runCliProcess(['--dir', dir, '--json', 'scan', '-'], { input: prompt });
    expect(r.code).toBe(0);
    const json = JSON.parse(r.stdout);
    expect(json.selected[0].step_id).toBe(137);
    expect(json.dropped_terms).toHaveLength(MAX_DROPPED_TERMS);
    expect(json.dropped_terms[0]).toEqual({ term: 'what', reason: 'stopword' });
    expect(json.dropped_terms_omitted).toBeGreaterThanOrEqual(3000 - MAX_DROPPED_TERMS);
    expect(r.stdout.length).toBeLessThan(20_000);
    const human = runCliProcess(['--dir', dir, 'scan', '-'], { input: prompt }).stdout;
    expect(human).toContain(`not searched, not listed: ${json.dropped_terms_omitted} more words`);
  });

  it('pages both 137 and 120 for the README’s two-part question', () => {
    const q =
      'What port are we using for PostgreSQL, and which migration applied the billing table?';
    const json = JSON.parse(runCliProcess(['--dir', dir, '--json', 'scan', q]).stdout);
    const steps = json.selected.map((p: { step_id: number }) => p.step_id);
    expect(steps).toContain(137);
    expect(steps).toContain(120);
    expect(steps.indexOf(137)).toBeLessThan(steps.indexOf(91));
  });
});
