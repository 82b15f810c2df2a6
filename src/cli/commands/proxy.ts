import type { Command } from 'commander';
import type { RunningProxy } from '../../adapters/proxy/index.js';
import { UsageError } from '../../protocol/errors.js';
import { shownStore } from '../../store/pg/pg-url.js';
import {
  type GlobalOptions,
  globals,
  parseIntArg,
  parsePositiveIntArg,
  requireDirectory,
} from '../context.js';
import { engineOptions, parseLiveOverflow } from '../engine-options.js';
import { helpText } from '../help-text.js';

interface ProxyFlags {
  upstream?: string;
  host: string;
  port: string;
  budget: string;
  keepRecent: string;
  foldThreshold: string;
  maxBody: string;
  timeout: string;
  liveOverflow: string;
  modelCheck?: boolean;
}

/** Resolves when the process is asked to stop (SIGINT / SIGTERM). */
function stopSignal(): Promise<string> {
  return new Promise((done) => {
    process.once('SIGINT', () => done('SIGINT'));
    process.once('SIGTERM', () => done('SIGTERM'));
  });
}

/** `--port`: 0 to 65535, the error naming the flag (the library's names its option). */
function parsePort(value: string): number {
  const port = parseIntArg(value, '--port');
  if (port > 65535) throw new UsageError(`--port must be at most 65535, got ${port}`);
  return port;
}

/** Starts the proxy, prints where it listens, and serves until a stop signal. */
async function runProxy(opts: ProxyFlags, cmd: Command): Promise<void> {
  const g = globals(cmd);
  if (!opts.upstream) {
    throw new UsageError(
      'proxy needs --upstream URL (e.g. https://api.anthropic.com or https://api.openai.com)',
    );
  }
  requireDirectory(g.dir);
  const e = engineOptions(cmd);
  // Loaded here so hono costs nothing to every other command.
  const { humanLogLine, isLoopback, startProxy } = await import('../../adapters/proxy/index.js');
  const proxy = await startProxy({
    upstream: opts.upstream,
    host: opts.host,
    port: parsePort(opts.port),
    dir: g.dir,
    budget: parsePositiveIntArg(opts.budget, '--budget'),
    keepRecent: parseIntArg(opts.keepRecent, '--keep-recent'),
    foldThreshold: parseIntArg(opts.foldThreshold, '--fold-threshold'),
    maxBodyBytes: parsePositiveIntArg(opts.maxBody, '--max-body'),
    timeoutMs: parsePositiveIntArg(opts.timeout, '--timeout'),
    liveOverflow: parseLiveOverflow(opts.liveOverflow),
    checkModels: opts.modelCheck !== false,
    ...(e.tokenizer ? { tokenizer: e.tokenizer } : {}),
    ...(e.retrieval ? { retrieval: e.retrieval } : {}),
    onLog: (line) =>
      process.stdout.write(g.json ? `${JSON.stringify(line)}\n` : `${humanLogLine(line)}\n`),
  });
  if (!isLoopback(opts.host)) {
    process.stderr.write(
      `contextfold proxy: warning: listening on ${opts.host}, not loopback: anyone who can reach it can send calls through it and read any session's archived pages by naming its session\n`,
    );
  }
  // Listening for a stop signal before the URL is printed: whoever reads it may stop us at once
  // (a signal before the handler would end the process by default, exit 143, store not closed).
  const stopped = stopSignal();
  printListening(proxy, opts.upstream, g);
  const signal = await stopped;
  if (!g.json) process.stdout.write(`contextfold proxy: ${signal}, closing\n`);
  // A second signal does not wait for streams still in flight.
  void stopSignal().then(() => process.exit(130));
  await proxy.close();
}

/** The first output: the URL, and the variables a client sets to go through the proxy. */
function printListening(proxy: RunningProxy, upstream: string, g: GlobalOptions): void {
  if (g.json) {
    process.stdout.write(
      `${JSON.stringify({ listening: proxy.url, upstream, store: shownStore(g.dir), env: proxy.env })}\n`,
    );
  } else {
    process.stdout.write(
      [
        `contextfold proxy listening on ${proxy.url} → ${upstream} (sessions in ${shownStore(g.dir)}/sessions)`,
        `export ANTHROPIC_BASE_URL=${proxy.env.ANTHROPIC_BASE_URL}`,
        `export OPENAI_BASE_URL=${proxy.env.OPENAI_BASE_URL}`,
        '',
      ].join('\n'),
    );
  }
}

const HELP = helpText({
  notes: [
    'Anthropic Messages (POST /v1/messages, /v1/messages/count_tokens) and OpenAI Chat',
    'Completions (POST /v1/chat/completions) calls are folded: the client resends its whole',
    'history every call; the proxy keeps it as a session in <dir>/sessions/<id>/.contextfold',
    '(id from the x-contextfold-session header, else a hash of the first messages), folds old',
    'verbose turns, pages in what the live turn needs for that call only, and streams the',
    'answer back byte for byte. Any other request passes through untouched. API keys are',
    'forwarded, never stored. A call for a model the upstream says it does not serve gets the',
    "upstream's 404 and writes nothing (asked once per model with GET /v1/models/<id>; a",
    'lookup that takes over 5 s or is refused 401/403 lets the call go ahead, and is asked',
    'again after 10 minutes).',
    '',
    'Prints the URL and the lines to set, then one line per call (JSON lines with --json).',
    '',
  ],
  examples: [
    'contextfold --dir ~/.contextfold proxy --upstream https://api.anthropic.com',
    'ANTHROPIC_BASE_URL=http://127.0.0.1:8787 claude',
    'contextfold --json proxy --upstream https://api.openai.com --budget 24000',
  ],
});

/** `contextfold proxy`. */
export function register(program: Command): void {
  program
    .command('proxy')
    .option('--upstream <URL>', 'base URL of the model API, e.g. https://api.anthropic.com')
    .option('--host <HOST>', 'address to listen on (loopback by default)', '127.0.0.1')
    .option('--port <PORT>', 'port to listen on (0: any free port)', '8787')
    .option('--budget <N>', 'token budget of every prompt sent upstream', '32000')
    .option('--keep-recent <K>', 'turns before the live one always kept verbatim', '10')
    .option('--fold-threshold <N>', 'older turns above this many tokens are folded', '256')
    .option('--max-body <BYTES>', 'largest request body accepted (413 above)', String(32 << 20))
    .option('--timeout <MS>', 'upstream idle timeout in milliseconds', '600000')
    .option(
      '--live-overflow <mode>',
      'a live turn larger than the budget: excerpt (head and tail, marked) or send-whole',
      'excerpt',
    )
    .option(
      '--no-model-check',
      'do not ask the upstream (GET /v1/models/<id>, once per model) whether it serves a model before a session is touched',
    )
    .addHelpText('after', HELP)
    .action(runProxy);
}
