import { readFileSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';

const SRC = resolve(dirname(fileURLToPath(import.meta.url)), '..');

// Value imports and re-exports (`import type` and `export type` load nothing; `import()` is
// loaded only when the code runs it, which is the point).
const STATIC =
  /(?:^|\n)\s*(?:import|export)\s(?!type\s)[^;]*?from\s+['"]([^'"]+)['"]|(?:^|\n)\s*import\s+['"]([^'"]+)['"]/g;

/** The npm packages a process loads at start-up from these modules, by static imports. */
function packagesLoadedBy(entries: readonly string[]): Set<string> {
  const seen = new Set<string>();
  const packages = new Set<string>();
  const walk = (file: string): void => {
    if (seen.has(file)) return;
    seen.add(file);
    for (const m of readFileSync(file, 'utf8').matchAll(STATIC)) {
      const spec = (m[1] ?? m[2])!;
      if (spec.startsWith('.')) walk(join(dirname(file), spec).replace(/\.js$/, '.ts'));
      else if (!spec.startsWith('node:')) packages.add(spec);
    }
  };
  for (const e of entries) walk(join(SRC, e));
  return packages;
}

describe('start-up of the read commands and the hook', () => {
  // The hook is a fresh process on every Claude Code prompt: what it loads, every prompt waits for.
  it.each(['scan', 'status', 'recall', 'hydrate', 'hook'])(
    '`contextfold %s` loads no npm package but commander and better-sqlite3',
    (command) => {
      // PostgreSQL, secretlint and zod load on first use (a postgres:// store, a redaction, a
      // guard table whose bytes are not the shipped ones).
      const loaded = packagesLoadedBy(['cli/main.ts', `cli/commands/${command}.ts`]);
      expect([...loaded].sort()).toEqual(['better-sqlite3', 'commander']);
    },
  );

  it('`contextfold fold` of one turn loads no schema library (a batch loads the turns reader)', () => {
    expect([...packagesLoadedBy(['cli/main.ts', 'cli/commands/fold.ts'])].sort()).toEqual([
      'better-sqlite3',
      'commander',
    ]);
  });

  it('a hook run handed to the hook server loads no npm package at all', () => {
    expect([...packagesLoadedBy(['cli/bin.ts', 'cli/hook-client.ts'])]).toEqual([]);
  });

  it('sees through re-exports to the packages behind them (the walk itself)', () => {
    expect(packagesLoadedBy(['guard/secretlint-runner.ts'])).toContain('@secretlint/core');
    expect(packagesLoadedBy(['store/pg/pg-store.ts'])).toContain('pg');
  });
});
