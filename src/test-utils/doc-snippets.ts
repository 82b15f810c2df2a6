/** Fence languages whose blocks are run as shell. */
export const SHELL_LANGS = ['sh', 'bash', 'shell', 'console'];

/**
 * The comment, on the line before a fence, that exempts a shell block from running:
 * `<!-- snippet: skip: reason -->` (it needs something a test cannot have: a network install,
 * a real API key, a long-running server) or `<!-- snippet: needs ../shared -->` (it runs only
 * when the shared data is present, like the other interop suites).
 */
export const MARKER_RE = /^<!--\s*snippet:\s*(skip|needs \.\.\/shared)\s*(?::\s*(.*?))?\s*-->$/;

/** One fenced shell block of a Markdown page. */
export interface DocSnippet {
  file: string;
  /** 1-based line of the opening fence. */
  line: number;
  lang: string;
  /** The script to run (for `console` blocks: the `$ ` command lines only). */
  script: string;
  marker: { kind: 'skip' | 'needs-shared'; reason: string } | null;
}

function consoleCommands(lines: string[]): string {
  const out: string[] = [];
  let continuing = false;
  for (const l of lines) {
    if (continuing || l.startsWith('$ ')) {
      out.push(continuing ? l : l.slice(2));
      continuing = l.endsWith('\\');
    }
  }
  return out.join('\n');
}

function markerBefore(lines: string[], fence: number, file: string): DocSnippet['marker'] {
  let i = fence - 1;
  while (i >= 0 && lines[i]!.trim() === '') i--;
  const text = i >= 0 ? lines[i]!.trim() : '';
  if (!text.startsWith('<!-- snippet')) return null;
  const m = MARKER_RE.exec(text);
  if (!m) throw new Error(`${file}:${i + 1}: malformed snippet marker: ${text}`);
  if (m[1] === 'skip') {
    if (!m[2]) throw new Error(`${file}:${i + 1}: a skipped block needs a reason`);
    return { kind: 'skip', reason: m[2] };
  }
  return { kind: 'needs-shared', reason: m[2] ?? 'reads ../shared' };
}

/**
 * The shell blocks of a Markdown page, in order, with their markers.
 *
 * @example
 * extractSnippets('README.md', readFileSync('README.md', 'utf8'));
 */
export function extractSnippets(file: string, text: string): DocSnippet[] {
  const lines = text.split('\n');
  const out: DocSnippet[] = [];
  for (let i = 0; i < lines.length; i++) {
    const open = /^(`{3,}|~{3,})\s*([\w-]*)/.exec(lines[i]!);
    if (!open) continue;
    const fence = open[1]!;
    const lang = open[2]!.toLowerCase();
    let end = i + 1;
    while (end < lines.length && !lines[end]!.startsWith(fence)) end++;
    if (end >= lines.length) throw new Error(`${file}:${i + 1}: unclosed code fence`);
    if (SHELL_LANGS.includes(lang)) {
      const body = lines.slice(i + 1, end);
      out.push({
        file,
        line: i + 1,
        lang,
        script: lang === 'console' ? consoleCommands(body) : body.join('\n'),
        marker: markerBefore(lines, i, file),
      });
    }
    i = end;
  }
  return out;
}
