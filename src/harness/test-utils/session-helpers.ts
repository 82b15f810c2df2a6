import { createHash } from 'node:crypto';
import {
  mkdtempSync,
  readdirSync,
  readFileSync,
  readFileSync as readSchema,
  rmSync,
  statSync,
} from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Ajv2020 } from 'ajv/dist/2020.js';
import ajvFormats from 'ajv-formats';
import type { HydrationPolicy } from '../../protocol/policy.js';
import type { Message } from '../messages.js';
import type { ContextPack } from '../pack.js';
import type { Session } from '../session.js';
import type { SyntheticTurn } from '../synthetic.js';

/** A scratch directory with a store path inside; `cleanup()` removes it. */
export function scratch(): { root: string; dir: string; cleanup: () => void } {
  const root = mkdtempSync(join(tmpdir(), 'cf-'));
  return {
    root,
    dir: join(root, '.contextfold'),
    cleanup: () => rmSync(root, { recursive: true, force: true }),
  };
}

/** A clock that starts at `start` and advances `stepMs` on every call. */
export function stepClock(start = Date.UTC(2025, 0, 1), stepMs = 1000): () => Date {
  let t = start;
  return () => {
    const d = new Date(t);
    t += stepMs;
    return d;
  };
}

/** A hydration policy with small caps, so pages fit small test budgets. */
export function smallPolicy(perCall: number, perTurn: number): HydrationPolicy {
  return {
    policy_version: '1.1',
    max_rehydration_tokens_per_call: perCall,
    max_rehydration_tokens_per_turn: perTurn,
    scope: 'single_turn',
    eviction_trigger: 'after_response',
    integrity_verification: true,
  };
}

/** Gives every message of a synthetic turn a fixed timestamp derived from its turn index. */
export function stamped(
  turns: SyntheticTurn[],
): { prompt: Message & { role: 'user' }; response: Message[] }[] {
  const at = (i: number, k: number): string =>
    new Date(Date.UTC(2025, 5, 1) + i * 60_000 + k * 1000).toISOString().replace('.000', '');
  return turns.map((t, i) => ({
    prompt: { role: 'user', content: t.prompt, timestamp: at(i, 0) },
    response: t.response.map((m, k) => ({ ...m, timestamp: at(i, k + 1) })),
  }));
}

/** One turn of a driven session. */
export interface DrivenTurn {
  pack: ContextPack;
  evicted: number[];
}

/** Drives a session through prompts and responses. */
export async function drive(
  session: Session,
  turns: { prompt: string | (Message & { role: 'user' }); response: Message[] }[],
  hook?: (i: number, pack: ContextPack) => void | Promise<void>,
): Promise<DrivenTurn[]> {
  const out: DrivenTurn[] = [];
  for (const [i, t] of turns.entries()) {
    const pack = await session.beforeTurn(t.prompt);
    await hook?.(i, pack);
    const r = await session.afterTurn(t.response);
    out.push({ pack, evicted: r.evicted });
  }
  return out;
}

/** SHA-256 of every file under a directory (path → hash), to prove nothing was written. */
export function snapshot(dir: string): Record<string, string> {
  const out: Record<string, string> = {};
  const walk = (d: string): void => {
    for (const name of readdirSync(d).sort()) {
      const p = join(d, name);
      if (statSync(p).isDirectory()) walk(p);
      else out[p] = createHash('sha256').update(readFileSync(p)).digest('hex');
    }
  };
  walk(dir);
  return out;
}

/** The folded-step schema validator (ajv, draft 2020-12, with formats). */
export function foldedStepValidator(): ReturnType<Ajv2020['compile']> {
  const schema = JSON.parse(
    readSchema(new URL('../../../schemas/folded_step.schema.json', import.meta.url), 'utf8'),
  );
  const ajv = new Ajv2020({ strict: true, allErrors: true });
  ajvFormats.default(ajv);
  return ajv.compile(schema);
}

/**
 * Checks that no tool call is split from its result in a pack: every result follows its call,
 * and a call whose result exists in the history has it in the same pack.
 */
export function assertPairsIntact(pack: ContextPack, answered: ReadonlySet<string>): void {
  const calls = new Set<string>();
  const results = new Set<string>();
  for (const m of pack.messages) {
    if (m.role === 'assistant') for (const c of m.toolCalls ?? []) calls.add(c.id);
    if (m.role === 'tool' && m.toolCallId) {
      if (!calls.has(m.toolCallId))
        throw new Error(`turn ${pack.turn}: result ${m.toolCallId} without its call`);
      results.add(m.toolCallId);
    }
  }
  for (const id of calls) {
    if (answered.has(id) && !results.has(id))
      throw new Error(`turn ${pack.turn}: call ${id} without its result`);
  }
}

/**
 * A test log of about 4,500 tokens (3× a 1,500-token budget) with distinct first, middle and
 * last lines, to tell what an excerpt kept from what it left out.
 */
export function bigTestLog(): string {
  const out = ['HEAD-FIRST-LINE $ npm test'];
  for (let i = 1; i < 600; i++) {
    out.push(i === 300 ? 'MIDDLE-ONLY-IN-STORE pass 300' : `ok ${i} - suite ${i} passes`);
  }
  out.push('TAIL-LAST-LINE 1 failing: expected 3, got 4');
  return out.join('\n');
}

/**
 * An event log text edited behind the session's back, with its hash chain made whole again:
 * each line's `prev` is set to the hash of the line now before it. For tests of the checks a
 * consistently chained log meets after the chain (the policy, the store, the line's own fields).
 *
 * @example
 * await st.writeEventsText(rechained(original.replace('"reason":"size"', '"reason":"budget"')));
 */
export function rechained(text: string): string {
  const sha = (t: string) => createHash('sha256').update(t).digest('hex');
  let last = sha('');
  return text.replace(/^.*$/gm, (line) => {
    if (line === '') return line;
    const out = line.replace(/"prev":"[0-9a-f]{64}"\}$/, `"prev":"${last}"}`);
    last = sha(out);
    return out;
  });
}

/**
 * An event log text as a version before the hash chain wrote it: no `prev`, no `log_chain`, no
 * `log_head` (such a log has no head either: remove it beside the text written).
 */
export function unchained(text: string): string {
  return text
    .replaceAll(/,"prev":"[0-9a-f]{64}"\}$/gm, '}')
    .replaceAll(',"log_chain":"sha256"', '')
    .replaceAll(',"log_head":"sha256"', '');
}
