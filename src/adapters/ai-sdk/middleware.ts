import type {
  LanguageModelV3CallOptions,
  LanguageModelV3Message,
  LanguageModelV3Middleware,
  LanguageModelV3Prompt,
  LanguageModelV3StreamPart,
} from '@ai-sdk/provider';
import { checkOpenOptions } from '../../engine/open-options.js';
import type { Message } from '../../harness/messages.js';
import type { ContextPack } from '../../harness/pack.js';
import { continueSession, systemNote } from '../../harness/per-call.js';
import { Session, type SessionOptions } from '../../harness/session.js';
import { checkSessionOptions, SESSION_OPTION_KEYS } from '../../harness/session-options.js';
import { isStepConflictError, UsageError } from '../../protocol/errors.js';
import { checkOptionKeys } from '../../protocol/option-keys.js';
import { subStore } from '../../store/store-location.js';
import { packToPrompt } from './pack-prompt.js';
import { messageKey, toNeutral } from './prompt-messages.js';

/** The `providerOptions` key the middleware reads (and removes before the provider sees it). */
export const PROVIDER_OPTIONS_KEY = 'contextfold';

/** Options of {@link contextFoldMiddleware}. */
export interface ContextFoldMiddlewareOptions
  extends Omit<SessionOptions, 'dir' | 'engine' | 'sessionId'> {
  /** Base store directory. A session with an id lives in `<dir>/sessions/<id>/`, without one in `dir`. */
  dir?: string;
  /**
   * Base store overriding `dir`: a directory, or `postgres://…?store_id=NAME` (sessions with an
   * id are the stores `NAME/sessions/<id>`). See docs/team.md.
   */
  store?: string;
  /** Session id when a call's `providerOptions.contextfold.sessionId` does not give one. */
  sessionId?: string;
}

/** Every option {@link contextFoldMiddleware} takes (the compiler keeps this list complete). */
const { engine: _engine, dir: _dir, sessionId: _sessionId, ...sessionKeys } = SESSION_OPTION_KEYS;
const OPTION_KEYS: Record<keyof ContextFoldMiddlewareOptions, true> = {
  dir: true,
  store: true,
  sessionId: true,
  ...sessionKeys,
};

/** The middleware, plus access to its sessions. */
export interface ContextFoldMiddleware extends LanguageModelV3Middleware {
  /** The (opened) session for an id, e.g. to pin notes or inspect packs. */
  session(sessionId?: string): Promise<Session>;
  /** The pack sent by the latest call of a session (null before the first call). */
  lastPack(sessionId?: string): ContextPack | null;
  /**
   * Closes every session the middleware opened, after the work queued on them. A call whose model
   * is still answering gets its answer; its turn stays open in the log until the next call.
   */
  close(): Promise<void>;
}

interface Live {
  /** The session id (undefined: the middleware's default session). */
  id: string | undefined;
  session: Session;
  /** Serialises the calls of one session. */
  queue: Promise<unknown>;
  /** The open turn's pack and the prompt it was built from (a retry resends it). */
  pending: { key: string; prompt: LanguageModelV3Prompt } | null;
  lastPack: ContextPack | null;
  /** Set by `close()`: a call whose model answers afterwards leaves its turn open (see `finish`). */
  closed: boolean;
}

// Not starting with a dot: `.` and `..` would name the directory above the session store.
const ID_RE = /^[A-Za-z0-9_-][A-Za-z0-9._-]{0,199}$/;

function sessionIdOf(
  params: LanguageModelV3CallOptions,
  fallback: string | undefined,
): string | undefined {
  const mine = params.providerOptions?.[PROVIDER_OPTIONS_KEY] ?? {};
  // A misspelt key (session_id) was ignored: the call went to the default session silently.
  const unknown = Object.keys(mine).filter((k) => k !== 'sessionId');
  if (unknown.length > 0) {
    throw new UsageError(
      `providerOptions.${PROVIDER_OPTIONS_KEY} takes only sessionId, not ${unknown.map((k) => `'${k}'`).join(', ')}`,
    );
  }
  const own = mine.sessionId;
  if (own !== undefined && typeof own !== 'string') {
    throw new UsageError(`providerOptions.${PROVIDER_OPTIONS_KEY}.sessionId must be a string`);
  }
  return checkedId(own ?? fallback);
}

/** A session id as given, or a UsageError when it could name a directory outside the sessions. */
function checkedId(id: string | undefined): string | undefined {
  if (id !== undefined && (typeof id !== 'string' || !ID_RE.test(id))) {
    throw new UsageError(
      `session id '${String(id)}' must be letters, digits, '.', '_' or '-', not starting with '.' (it names a directory)`,
    );
  }
  return id;
}

function withoutOwnOptions(params: LanguageModelV3CallOptions): LanguageModelV3CallOptions {
  if (!params.providerOptions || !(PROVIDER_OPTIONS_KEY in params.providerOptions)) return params;
  const { [PROVIDER_OPTIONS_KEY]: _own, ...rest } = params.providerOptions;
  return { ...params, providerOptions: rest };
}

/** Runs `fn` after every earlier call of the session, whether those failed or not. */
async function serial<T>(l: Live, fn: () => Promise<T>): Promise<T> {
  const run = l.queue.then(fn, fn);
  l.queue = run.catch(() => undefined);
  return run;
}

/**
 * Closes the open turn after the model answered: its pages leave (CONF-07). A conflict (another
 * writer of the session moved its log on meanwhile) drops this copy, so the next call reads the
 * log again, and is reported.
 */
async function finish(l: Live, drop: (stale: Live) => Promise<void>): Promise<void> {
  // The middleware was closed while the model answered: the caller still gets the answer (it
  // was refused with 'this session is closed'), and the turn left open in the log is closed by
  // the next call, which reads the log again.
  if (l.closed) return;
  try {
    await serial(l, async () => {
      if (l.session.status().open_turn !== null) await l.session.afterTurn();
      l.pending = null;
    });
  } catch (e) {
    if (isStepConflictError(e)) await drop(l);
    throw e;
  }
}

/** The sessions of one middleware, opened lazily (one per id) and shared by concurrent calls. */
function sessionPool(dir: string, sessionOptions: Omit<SessionOptions, 'dir' | 'sessionId'>) {
  const live = new Map<string, Promise<Live>>();
  const resolved = new Map<string, Live>();
  const key = (id: string | undefined) => id ?? '';
  const open = (id: string | undefined): Promise<Live> => {
    let l = live.get(key(id));
    if (!l) {
      l = Session.open({
        ...sessionOptions,
        dir: id === undefined ? dir : subStore(dir, ['sessions', id]),
        ...(id === undefined ? {} : { sessionId: id }),
      }).then((session) => {
        const x: Live = {
          id,
          session,
          queue: Promise.resolve(),
          pending: null,
          lastPack: null,
          closed: false,
        };
        resolved.set(key(id), x);
        return x;
      });
      l.catch(() => live.delete(key(id)));
      live.set(key(id), l);
    }
    return l;
  };
  /** Forgets `stale` (closed) so that the next `open` reads the session's log again. */
  const drop = async (stale: Live): Promise<void> => {
    if (resolved.get(key(stale.id)) === stale) {
      live.delete(key(stale.id));
      resolved.delete(key(stale.id));
    }
    await stale.session.close().catch(() => undefined);
  };
  const close = async (): Promise<void> => {
    const all = [...live.values()];
    live.clear();
    resolved.clear();
    for (const l of all) {
      const x = await l.catch(() => null);
      if (!x) continue;
      // Work already queued on the session (a prompt being built, a turn being closed) ends first.
      x.closed = true;
      await x.queue;
      await x.session.close();
    }
  };
  return { open, drop, close, resolved: (id: string | undefined) => resolved.get(key(id)) };
}

/**
 * Refuses a prompt that does not extend the session's history (compared in recorded form); a
 * changed system prompt is taken as the app's new instructions and recorded
 * (`continueSession`). Returns the history's length, where the new messages start.
 */
async function checkContinues(
  session: Session,
  incoming: readonly Message[],
  id: string | undefined,
): Promise<number> {
  const at = await continueSession(session, incoming, (a, b) => messageKey(a) === messageKey(b));
  if (at !== null) {
    const note = systemNote(session.history(), incoming, at);
    throw new UsageError(
      `the prompt does not continue session ${id ?? '(default)'}: message ${at} differs from its history${note}; start a new session id for a new conversation`,
    );
  }
  return session.status().history_length;
}

/**
 * The user messages of a prompt that the session records redacted (a pasted secret), each as
 * the original with its text parts redacted, so a rebuilt message keeps its files and provider
 * options; only when the parts redacted one by one give exactly the recorded text.
 */
async function redactedUserMessages(
  session: Session,
  prompt: LanguageModelV3Prompt,
  incoming: ReturnType<typeof toNeutral>,
  pack: ContextPack,
): Promise<Map<number, { message: LanguageModelV3Message; text: string }>> {
  const out = new Map<number, { message: LanguageModelV3Message; text: string }>();
  // Only the messages the pack sends (bounded by its budget, not by the history's length).
  const sent = new Set(pack.entries.flatMap((e) => e.steps));
  const users = incoming.messages.flatMap((m, k) => (m.role === 'user' && sent.has(k) ? [k] : []));
  const forms = await session.recordedForm(users.map((k) => incoming.messages[k]!));
  const recorded = new Map(users.map((k, i) => [k, forms[i]!]));
  for (const k of users) {
    const o = incoming.origin[k]!;
    const original = prompt[o]!;
    if (original.role !== 'user' || recorded.get(k)!.content === incoming.messages[k]!.content) {
      continue;
    }
    const texts = original.content.flatMap((p) => (p.type === 'text' ? [p.text] : []));
    const clean = await session.recordedForm(texts.map((t) => ({ role: 'user', content: t })));
    let t = 0;
    const content = original.content.map((p) =>
      p.type === 'text' ? { ...p, text: clean[t++]!.content } : p,
    );
    const message = { ...original, content };
    const text = recorded.get(k)!.content;
    if (toNeutral([message]).messages[0]?.content === text) out.set(o, { message, text });
  }
  return out;
}

/**
 * The prompt to send for one call: the new messages are appended, the open turn (if any) is
 * closed, and the pack is built. A retry of the same call gets the same prompt back.
 */
async function promptFor(
  l: Live,
  params: LanguageModelV3CallOptions,
  id: string | undefined,
): Promise<LanguageModelV3Prompt> {
  const { session } = l;
  const incoming = toNeutral(params.prompt);
  const known = await checkContinues(session, incoming.messages, id);
  const fresh = incoming.messages.slice(known);
  const callKey = JSON.stringify(incoming.messages.map(messageKey));
  if (fresh.length === 0 && l.pending && l.pending.key === callKey) return l.pending.prompt;
  if (session.status().open_turn !== null) await session.afterTurn();
  const last = fresh.at(-1);
  const before: Message[] = last?.role === 'user' ? fresh.slice(0, -1) : fresh;
  if (before.length > 0) await session.append(before);
  const pack = await session.beforeTurn(last?.role === 'user' ? last : undefined);
  const out = packToPrompt(pack, {
    original: params.prompt,
    history: incoming.messages,
    origin: incoming.origin,
    redacted: await redactedUserMessages(session, params.prompt, incoming, pack),
  });
  l.pending = { key: callKey, prompt: out };
  l.lastPack = pack;
  return out;
}

/**
 * AI SDK middleware (`LanguageModelV3Middleware`, `ai@6` / `@ai-sdk/provider@3`) that runs every
 * model call through a contextfold {@link Session}: the incoming prompt's new messages are
 * appended to the session history, old verbose turns are folded to verified cold storage and
 * replaced by folded-step records, and archived turns the prompt needs are paged in at the end
 * of the last user message for this call only; the next call carries none of them (CONF-07).
 * Calls of one session must continue one conversation (the prompt extends the history).
 *
 * @example
 * import { wrapLanguageModel, generateText } from 'ai';
 * const model = wrapLanguageModel({ model: openai('gpt-4.1'), middleware: contextFoldMiddleware({ dir: '.contextfold', budget: 32_000 }) });
 * await generateText({ model, messages, providerOptions: { contextfold: { sessionId: 'chat-42' } } });
 */
export function contextFoldMiddleware(
  options: ContextFoldMiddlewareOptions,
): ContextFoldMiddleware {
  // A misspelt option (keep_recent, budjet) was ignored: the default applied silently.
  checkOptionKeys('contextFoldMiddleware', options ?? {}, OPTION_KEYS);
  const { dir: dirOption, store, sessionId: defaultId, ...sessionOptions } = options;
  const dir = store ?? dirOption;
  if (typeof dir !== 'string' || dir === '')
    throw new UsageError('contextFoldMiddleware needs { dir, budget } (or { store, budget })');
  checkedId(defaultId);
  // Every option is checked now, not when the first call opens a session (a bad budget or
  // tokenizer surfaced only from the first model call).
  checkSessionOptions(sessionOptions);
  const { policy, tokenizer, retrieval, redact, cacheDir, clock } = sessionOptions;
  checkOpenOptions({ dir, policy, tokenizer, retrieval, redact, cacheDir, clock });
  const pool = sessionPool(dir, sessionOptions);
  const ids = new WeakMap<LanguageModelV3CallOptions, Live>();

  return {
    specificationVersion: 'v3',

    async transformParams({ params }) {
      const id = sessionIdOf(params, defaultId);
      let l = await pool.open(id);
      let prompt: LanguageModelV3Prompt;
      try {
        prompt = await serial(l, () => promptFor(l, params, id));
      } catch (e) {
        if (!isStepConflictError(e)) throw e;
        // Another writer of this session (a second middleware instance, another process) moved
        // its log on: this instance's copy is stale and wrote nothing. Read the log again and
        // build this call on it; a conflict that remains is the caller's to see.
        await pool.drop(l);
        l = await pool.open(id);
        const fresh = l;
        prompt = await serial(fresh, () => promptFor(fresh, params, id));
      }
      const next = { ...withoutOwnOptions(params), prompt };
      ids.set(next, l);
      return next;
    },

    async wrapGenerate({ doGenerate, params }) {
      const result = await doGenerate();
      const l = ids.get(params);
      if (l) await finish(l, pool.drop);
      return result;
    },

    async wrapStream({ doStream, params }) {
      const result = await doStream();
      const l = ids.get(params);
      if (!l) return result;
      const stream = result.stream.pipeThrough(
        new TransformStream<LanguageModelV3StreamPart, LanguageModelV3StreamPart>({
          async flush() {
            await finish(l, pool.drop);
          },
        }),
      );
      return { ...result, stream };
    },

    async session(sessionId) {
      // Checked as a call's id is: '../x' opened (and created) a store beside the base.
      return (await pool.open(checkedId(sessionId ?? defaultId))).session;
    },

    lastPack(sessionId) {
      return pool.resolved(checkedId(sessionId ?? defaultId))?.lastPack ?? null;
    },

    close: pool.close,
  };
}
