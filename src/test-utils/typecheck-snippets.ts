import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import ts from 'typescript';

const ROOT = fileURLToPath(new URL('../../', import.meta.url));

/** A piece of example code: a docs fence or a doc comment's `@example`. */
export interface Snippet {
  name: string;
  code: string;
}

const CANNOT_FIND_NAME = 2304;
const NO_SHORTHAND_VALUE = 18004;
const CANNOT_FIND_MODULE = 2307;

function options(): ts.CompilerOptions {
  const config = ts.readConfigFile(join(ROOT, 'tsconfig.json'), ts.sys.readFile);
  const parsed = ts.parseJsonConfigFileContent(config.config, ts.sys, ROOT);
  return { ...parsed.options, noEmit: true, noUnusedLocals: false };
}

/** What a diagnostic of `code` names (`Cannot find name 'x'`, `Cannot find module 'y'`). */
function named(diagnostics: readonly ts.Diagnostic[], code: number): string[] {
  const names = new Set<string>();
  for (const d of diagnostics) {
    if (d.code !== code) continue;
    const m = /'([^']+)'/.exec(ts.flattenDiagnosticMessageText(d.messageText, ''));
    if (m) names.add(m[1]!);
  }
  return [...names];
}

/**
 * Type-checks each snippet as an ES module inside this package, so `'contextfold'` and its
 * subpaths resolve through package.json `exports` to the built `dist/*.d.ts`. Names the snippet
 * leaves to the reader (the model call, the log bytes) are declared `any` after a first pass, and
 * so are third-party packages that are not installed (a provider the reader picks); every other
 * diagnostic (an import of ours that does not exist, a wrong method or option) is returned.
 *
 * @example
 * typecheckSnippets([{ name: 'a', code: "import { Session } from 'contextfold';" }]); // { a: [] }
 */
export function typecheckSnippets(snippets: readonly Snippet[]): Record<string, string[]> {
  const opts = options();
  const fileOf = (i: number): string => join(ROOT, 'src', `__snippet_${i}__.ts`);
  const run = (texts: string[], old?: ts.Program, lastIsAmbient = false): ts.Program => {
    const host = ts.createCompilerHost(opts);
    const byPath = new Map(
      texts.map((t, i) => [
        lastIsAmbient && i === texts.length - 1
          ? join(ROOT, 'src', '__snippet_ambient__.d.ts')
          : fileOf(i),
        t,
      ]),
    );
    const getSourceFile = host.getSourceFile.bind(host);
    host.getSourceFile = (f, lang, ...rest) => {
      const text = byPath.get(f);
      return text !== undefined
        ? ts.createSourceFile(f, text, lang, true)
        : getSourceFile(f, lang, ...rest);
    };
    const fileExists = host.fileExists.bind(host);
    host.fileExists = (f) => byPath.has(f) || fileExists(f);
    host.readFile = (f) => byPath.get(f) ?? ts.sys.readFile(f);
    return ts.createProgram([...byPath.keys()], opts, host, old);
  };
  const diagnosticsOf = (p: ts.Program, i: number): readonly ts.Diagnostic[] => {
    const sf = p.getSourceFile(fileOf(i))!;
    return [...p.getSyntacticDiagnostics(sf), ...p.getSemanticDiagnostics(sf)];
  };
  const first = run(snippets.map((s) => s.code));
  const absent = new Set<string>();
  const declared = snippets.map((s, i) => {
    const diagnostics = diagnosticsOf(first, i);
    for (const m of named(diagnostics, CANNOT_FIND_MODULE)) {
      if (!/^contextfold(\/|$)/.test(m)) absent.add(m);
    }
    const free = [
      ...named(diagnostics, CANNOT_FIND_NAME),
      ...named(diagnostics, NO_SHORTHAND_VALUE),
    ];
    const decls = [...new Set(free)].map((n) => `declare const ${n}: any;`);
    return `${s.code}\n${decls.join('\n')}\nexport {};\n`;
  });
  const ambient = [...absent].map((m) => `declare module '${m}';`).join('\n');
  const second = run([...declared, ambient], first, true);
  const out: Record<string, string[]> = {};
  snippets.forEach((s, i) => {
    out[s.name] = diagnosticsOf(second, i).map((d) => {
      const line =
        d.file && d.start !== undefined
          ? d.file.getLineAndCharacterOfPosition(d.start).line + 1
          : 0;
      return `line ${line}: ${ts.flattenDiagnosticMessageText(d.messageText, ' ')}`;
    });
  });
  return out;
}

/** The TypeScript fences of a Markdown page that import this package. */
export function docsSnippets(file: string): Snippet[] {
  const path = join(ROOT, file);
  if (!existsSync(path)) return [];
  const lines = readFileSync(path, 'utf8').split('\n');
  const out: Snippet[] = [];
  for (let i = 0; i < lines.length; i++) {
    if (!/^```(ts|typescript)\s*$/.test(lines[i]!)) continue;
    let end = i + 1;
    while (end < lines.length && !lines[end]!.startsWith('```')) end++;
    const code = lines.slice(i + 1, end).join('\n');
    if (/from 'contextfold(\/[\w-]+)?'/.test(code)) out.push({ name: `${file}:${i + 1}`, code });
    i = end;
  }
  return out;
}
