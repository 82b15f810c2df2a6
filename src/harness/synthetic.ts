import type { Message } from './messages.js';

/** One turn of a synthetic agent session: the user's prompt and the agent's response. */
export interface SyntheticTurn {
  prompt: string;
  response: Message[];
}

/** Options of {@link syntheticSession}. */
export interface SyntheticOptions {
  turns: number;
  /** Seed of the deterministic generator. Default 1. */
  seed?: number;
  /** Lines of tool output per turn (varied ±50%). Default 40. */
  outputLines?: number;
}

/** mulberry32: a tiny deterministic generator, so every run builds the same session. */
function rng(seed: number): () => number {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

const MODULES = [
  'billing',
  'auth',
  'search',
  'ledger',
  'reports',
  'gateway',
  'scheduler',
  'inventory',
];
const WORDS = [
  'alpha',
  'bravo',
  'charlie',
  'delta',
  'echo',
  'foxtrot',
  'golf',
  'hotel',
  'india',
  'juliet',
];

/**
 * A deterministic synthetic coding-agent session: each turn a prompt, an assistant tool call
 * and its result (varied sizes, repeated logs, re-read files, failing commands), with a unique
 * marker word per turn (`marker<i>`) so a later prompt can ask for exactly that turn.
 *
 * @example
 * const turns = syntheticSession({ turns: 300 });
 * for (const t of turns) { await session.beforeTurn(t.prompt); await session.afterTurn(t.response); }
 */
export function syntheticSession(options: SyntheticOptions): SyntheticTurn[] {
  const next = rng(options.seed ?? 1);
  const base = options.outputLines ?? 40;
  const out: SyntheticTurn[] = [];
  for (let i = 0; i < options.turns; i++) {
    const mod = MODULES[Math.floor(next() * MODULES.length)]!;
    const file = `src/${mod}/handler_${i % 7}.ts`;
    const kind = i % 5;
    const id = `call_${i}`;
    const lines = Math.max(1, Math.round(base * (0.5 + next())));
    let prompt: string;
    let call: { name: string; input: unknown };
    let body: string;
    let exitCode: number | undefined;
    if (kind === 0) {
      prompt = `Read ${file} and check the ${mod} handler (marker${i}).`;
      call = { name: 'read_file', input: { path: file } };
      body = Array.from(
        { length: lines },
        (_, k) => `${k + 1}: export const ${WORDS[k % 10]}_${i}_${k} = '${mod}';`,
      ).join('\n');
    } else if (kind === 1) {
      prompt = `Run the ${mod} tests (marker${i}).`;
      call = { name: 'bash', input: { command: `npm test -- ${mod}` } };
      const failed = next() < 0.3;
      exitCode = failed ? 1 : 0;
      body = Array.from({ length: lines }, (_, k) => `  ✓ ${mod} case ${k} (${k % 9} ms)`).join(
        '\n',
      );
      body += failed
        ? `\nTypeError: cannot read ${WORDS[i % 10]}_${i} of undefined\n1 failed`
        : '\nall passed';
    } else if (kind === 2) {
      // The same build log again and again: the duplicate-tool-log strategy's case.
      prompt = `Build the project again (marker${i}).`;
      call = { name: 'bash', input: { command: 'npm run build' } };
      exitCode = 0;
      body = Array.from({ length: 12 }, (_, k) => `compiled chunk ${k}: ok`).join('\n');
    } else if (kind === 3) {
      prompt = `Edit ${file}: rename ${WORDS[i % 10]} in ${mod} (marker${i}).`;
      call = {
        name: 'edit_file',
        input: { path: file, find: WORDS[i % 10], replace: `${WORDS[i % 10]}2` },
      };
      body = `--- a/${file}\n+++ b/${file}\n@@ -1,3 +1,3 @@\n${Array.from({ length: Math.ceil(lines / 2) }, (_, k) => `-old ${k}\n+new ${k} marker${i}`).join('\n')}`;
    } else {
      prompt = `What does the ${mod} scheduler log say about job ${i}? (marker${i})`;
      call = { name: 'bash', input: { command: `tail -n ${lines} logs/${mod}.log` } };
      exitCode = 0;
      body = Array.from(
        { length: lines },
        (_, k) => `[${mod}] job ${i}.${k} state=${WORDS[(i + k) % 10]} marker${i}`,
      ).join('\n');
    }
    out.push({
      prompt,
      response: [
        { role: 'assistant', content: `Working on it (turn ${i}).`, toolCalls: [{ id, ...call }] },
        {
          role: 'tool',
          toolCallId: id,
          toolName: call.name,
          content: body,
          ...(exitCode !== undefined ? { exitCode } : {}),
        },
        {
          role: 'assistant',
          content: `Done with turn ${i}: ${mod} ${kind === 1 ? 'tests ran' : 'handled'}.`,
        },
      ],
    });
  }
  return out;
}
