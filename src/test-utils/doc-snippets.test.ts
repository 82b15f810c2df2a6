import { describe, expect, it } from 'vitest';
import { extractSnippets } from './doc-snippets.js';

const page = [
  '# Title',
  '```sh',
  'echo one',
  '```',
  '```ts',
  "const x = '```sh';",
  '```',
  '<!-- snippet: skip: needs the network -->',
  '',
  '```bash',
  'npm install -g x',
  '```',
  '<!-- snippet: needs ../shared -->',
  '```sh',
  'ls ../shared',
  '```',
  '```console',
  '$ contextfold status \\',
  '    --json',
  '{"nodes": 0}',
  '$ echo done',
  'done',
  '```',
  '```text',
  'not run',
  '```',
].join('\n');

describe('extractSnippets', () => {
  it('finds shell blocks in order, with their markers; console blocks keep only the commands', () => {
    const s = extractSnippets('x.md', page);
    expect(s.map((b) => [b.line, b.lang, b.script, b.marker])).toEqual([
      [2, 'sh', 'echo one', null],
      [10, 'bash', 'npm install -g x', { kind: 'skip', reason: 'needs the network' }],
      [14, 'sh', 'ls ../shared', { kind: 'needs-shared', reason: 'reads ../shared' }],
      [17, 'console', 'contextfold status \\\n    --json\necho done', null],
    ]);
  });

  it('refuses a malformed marker, a skip without a reason and an unclosed fence', () => {
    expect(() => extractSnippets('x.md', '<!-- snippet: skipp -->\n```sh\nx\n```')).toThrow(
      'x.md:1: malformed snippet marker',
    );
    expect(() => extractSnippets('x.md', '<!-- snippet: skip -->\n```sh\nx\n```')).toThrow(
      'x.md:1: a skipped block needs a reason',
    );
    expect(() => extractSnippets('x.md', '```sh\nx\n')).toThrow('x.md:1: unclosed code fence');
  });
});
