// The code a reader copies must compile: every TypeScript fence in README.md and docs/ that
// imports this package, and the `@example` of each main entry point, is type-checked against the
// built package (its `exports`), so a renamed or removed export, method or option fails here.
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { beforeAll, describe, expect, it } from 'vitest';
import { docsSnippets, type Snippet, typecheckSnippets } from './test-utils/typecheck-snippets.js';

const ROOT = fileURLToPath(new URL('../', import.meta.url));

/** Main entry points: [name, entry point, source file, the line that declares it]. */
const MAIN_ENTRIES: [string, string, string, RegExp][] = [
  ['ContextFold', 'contextfold', 'src/engine/context-fold.ts', /^export class ContextFold\b/],
  ['Session', 'contextfold', 'src/harness/session.ts', /^export class Session\b/],
  ['repairStore', 'contextfold', 'src/engine/repair.ts', /^export async function repairStore\b/],
  [
    'replaySession',
    'contextfold',
    'src/harness/replay.ts',
    /^export async function replaySession\b/,
  ],
];

/** The `@example` of the doc comment right above the declaration `decl` in `file`. */
function exampleOf(file: string, decl: RegExp): string {
  const lines = readFileSync(join(ROOT, file), 'utf8').split('\n');
  const at = lines.findIndex((l) => decl.test(l));
  if (at < 0 || lines[at - 1]?.trim() !== '*/')
    throw new Error(`${file}: no doc comment above ${decl}`);
  let start = at - 1;
  while (start > 0 && !lines[start]!.trim().startsWith('/**')) start--;
  const body = lines.slice(start + 1, at - 1).map((l) => l.replace(/^\s*\* ?/, ''));
  const ex = body.findIndex((l) => l.startsWith('@example'));
  if (ex < 0) throw new Error(`${file}: the doc comment of ${decl} has no @example`);
  const rest = body.slice(ex + 1);
  const next = rest.findIndex((l) => l.startsWith('@'));
  return (next < 0 ? rest : rest.slice(0, next)).join('\n');
}

const docs = ['README.md', ...readdirSync(join(ROOT, 'docs')).map((f) => `docs/${f}`)]
  .filter((f) => f.endsWith('.md'))
  .sort();
const fences: Snippet[] = docs.flatMap((f) => docsSnippets(f));
const examples: Snippet[] = MAIN_ENTRIES.map(([name, from, file, decl]) => ({
  name: `${name} @example`,
  code: `import { ${name} } from '${from}';\n${exampleOf(file, decl)}`,
}));
let diagnostics: Record<string, string[]> = {};

beforeAll(() => {
  diagnostics = typecheckSnippets([...fences, ...examples]);
}, 120_000);

describe('documented code compiles against the package', () => {
  it('finds the docs examples that import the package', () => {
    // The pages that teach the API by code: a fence that stopped importing the package (or a
    // page that moved) would silently drop out of the check.
    expect(fences.map((s) => s.name.split(':')[0])).toEqual(
      expect.arrayContaining(['README.md', 'docs/guard.md', 'docs/harness.md', 'docs/library.md']),
    );
  });

  it.each([...fences, ...examples].map((s) => s.name))('%s', (name) => {
    expect(diagnostics[name]).toEqual([]);
  });

  it('a snippet using an export that does not exist fails the check', () => {
    const r = typecheckSnippets([
      { name: 'gone', code: "import { runDemo } from 'contextfold';\nawait runDemo();" },
      {
        name: 'typo',
        code: "import { ContextFold } from 'contextfold';\nawait ContextFold.opn({ dir: 'x' });",
      },
    ]);
    expect(r.gone!.join('\n')).toMatch(/has no exported member 'runDemo'/);
    expect(r.typo!.join('\n')).toMatch(/Property 'opn' does not exist/);
  });
});
