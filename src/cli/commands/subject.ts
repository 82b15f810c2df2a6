import type { Command } from 'commander';
import { LibrarySubject } from '../../conformance/library-subject.js';
import { serveSubject } from '../../conformance/serve.js';
import { helpText } from '../help-text.js';

const HELP = helpText({
  notes: ['The runner starts this process and drives it; it is not meant for interactive use.'],
  examples: [
    [
      `echo '{"id":1,"op":"hello","protocol":"ipcf-subject/1"}' | contextfold subject`,
      'contextfold conformance --subject "contextfold subject"',
    ],
  ],
  footer: [
    '',
    'Output is always JSON lines (--json is accepted and changes nothing). The store directory is',
    'given by each "open" request, so --dir is ignored.',
  ],
});

/** `contextfold subject`: this library as a conformance subject on stdin/stdout. */
export function register(program: Command): void {
  program
    .command('subject')
    .addHelpText('after', HELP)
    .action(async () => {
      await serveSubject(new LibrarySubject(), process.stdin, process.stdout);
    });
}
