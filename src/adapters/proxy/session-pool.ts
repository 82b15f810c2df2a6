import type { Message } from '../../harness/messages.js';
import { continuation } from '../../harness/per-call.js';
import { stableJson } from '../../harness/render.js';
import { Session, type SessionOptions } from '../../harness/session.js';
import { sha256Hex } from '../../protocol/canonical-json.js';
import { UsageError } from '../../protocol/errors.js';
import { listSubStores, subStore } from '../../store/store-location.js';

/** Session options the proxy passes to every session it opens. */
export type PoolSessionOptions = Omit<SessionOptions, 'dir' | 'engine' | 'sessionId'>;

/**
 * The store of one proxy session: `<dir>/sessions/<id>/.contextfold`. The store keeps the
 * conventional name because folded-step records cite their cold node by it
 * (`.contextfold/cold_nodes/step_000042.json`), so every session's records read alike and a
 * replay of its history into any `.contextfold` store renders the same bytes.
 *
 * @example
 * sessionStoreDir('.contextfold', 'chat-42'); // '.contextfold/sessions/chat-42/.contextfold'
 */
export function sessionStoreDir(dir: string, id: string): string {
  return subStore(dir, ['sessions', id, '.contextfold']);
}

/** Options of a {@link SessionPool}. */
export interface SessionPoolOptions {
  /** The proxy's store root (a directory or a postgres:// URL): sessions live in {@link sessionStoreDir}. */
  root: string;
  session: PoolSessionOptions;
  /** Sessions kept open at most; idle ones beyond it are closed, least recently used first. */
  maxOpen: number;
}

const ID_RE = /^[A-Za-z0-9_-][A-Za-z0-9._-]{0,127}$/;

/**
 * Checks a client-chosen session id (header `x-contextfold-session`): it names a directory,
 * so letters, digits, `.`, `_`, `-`, at most 128, not starting with a dot.
 */
export function checkSessionId(id: string): string {
  if (!ID_RE.test(id)) {
    throw new UsageError(
      `x-contextfold-session '${id.slice(0, 40)}' must be 1-128 letters, digits, '.', '_' or '-' (not starting with '.')`,
    );
  }
  return id;
}

/** The comparable text of the first messages of a conversation (what derived ids hash). */
function keyOf(messages: readonly Message[]): string {
  return stableJson(messages.map((m) => ({ role: m.role, content: m.content })));
}

/**
 * The session id of a conversation that names none: a hash of its opening (the system messages
 * and the first prompt after them) and the API it speaks, so its first call and every later one
 * agree (two messages were hashed, and a conversation without a system prompt got another id on
 * its first call). Two conversations that start alike share it until they differ; then the
 * later one forks (see {@link SessionPool}).
 *
 * @example
 * derivedSessionId('anthropic', history.messages); // 'auto-3f2a…'
 */
export function derivedSessionId(api: string, messages: readonly Message[]): string {
  const first = messages.findIndex((m) => m.role !== 'system');
  const opening = messages.slice(0, first === -1 ? messages.length : first + 1);
  return `auto-${sha256Hex(`${api}\n${keyOf(opening)}`).slice(0, 24)}`;
}

/**
 * How an incoming history goes on from a session's (`continuation`: where it stops continuing
 * it, and the leading system messages it gives new text), compared in the form the session
 * records messages in (secrets redacted).
 */
async function continues(
  session: Session,
  incoming: readonly Message[],
): Promise<{ at: number | null; system: number[] }> {
  const stored = session.history();
  return continuation(stored, await session.recordedForm(incoming.slice(0, stored.length)));
}

/** A fork id of `base` for a history, named by a hash of its first `n` messages. */
function forkId(base: string, incoming: readonly Message[], n: number): string {
  return `${base}~${sha256Hex(keyOf(incoming.slice(0, n))).slice(0, 16)}`;
}

interface OpenEntry {
  session: Promise<Session>;
  used: number;
}

/**
 * The proxy's sessions: one store per conversation, one call at a time per conversation (a
 * lock per base id, held for the whole exchange so events never interleave), any number of
 * conversations in parallel. A history that does not continue its session (an edited or
 * rewound conversation, another conversation with the same opening, a conversation replayed
 * from its start) continues the fork of that base whose history it extends, or starts a new
 * fork (`<base>~<hash of the history up to where it differs>`). No store ever sees a history
 * that contradicts it, and a conversation stays in one store once it has left the base.
 */
export class SessionPool {
  private readonly locks = new Map<string, Promise<void>>();
  private readonly open = new Map<string, OpenEntry>();
  private readonly forks = new Map<string, Set<string>>();
  private tick = 0;
  private closed = false;

  constructor(private readonly options: SessionPoolOptions) {}

  /** Waits for the base id's turn; resolves with the function that ends it. */
  async lock(base: string): Promise<() => void> {
    const prev = this.locks.get(base) ?? Promise.resolve();
    let release!: () => void;
    const mine = new Promise<void>((r) => {
      release = r;
    });
    const chain = prev.then(() => mine);
    this.locks.set(base, chain);
    await prev;
    let done = false;
    return () => {
      if (done) return;
      done = true;
      release();
      if (this.locks.get(base) === chain) this.locks.delete(base);
    };
  }

  /**
   * The session (and its id) whose recorded history the incoming one continues: the base
   * session, else one of its forks (the most recently used first), else a new fork. Call it
   * holding the base id's lock.
   */
  async resolve(
    base: string,
    incoming: readonly Message[],
  ): Promise<{ id: string; session: Session }> {
    // A session the history continues with a new system prompt is taken when none continues
    // it as it is: of those, the one that recorded most of it (a fork a version before
    // `system_changed` started for a new system prompt has the rest of the conversation).
    let changed: { id: string; session: Session; length: number } | null = null;
    const pick = async (id: string, session: Session): Promise<boolean> => {
      const c = await continues(session, incoming);
      if (c.at !== null) return false;
      if (c.system.length === 0) return true;
      const length = session.status().history_length;
      if (!changed || length > changed.length) changed = { id, session, length };
      return false;
    };
    const main = await this.get(base);
    if (await pick(base, main)) return { id: base, session: main };
    const forks = await this.forksOf(base);
    const recent = (id: string): number => this.open.get(id)?.used ?? 0;
    for (const id of [...forks].sort((a, b) => recent(b) - recent(a))) {
      const session = await this.get(id);
      if (await pick(id, session)) return { id, session };
    }
    // Forks another proxy on the same store (a replica) made since they were listed: one may
    // be this conversation's, or hold the name a new fork would take.
    for (const id of (await listSubStores(this.options.root, 'sessions')).sort()) {
      if (!id.startsWith(`${base}~`) || forks.has(id)) continue;
      forks.add(id);
      const session = await this.get(id);
      if (await pick(id, session)) return { id, session };
    }
    const found = changed as { id: string; session: Session } | null;
    if (found) return { id: found.id, session: found.session };
    // Named by the history up to and with its first differing message; a name already taken
    // (a fork that went another way later) gets the next free number.
    const at = (await continues(main, incoming)).at ?? 0;
    const name = forkId(base, incoming, at + 1);
    let id = name;
    for (let k = 2; forks.has(id); k++) id = `${name}.${k}`;
    forks.add(id);
    return { id, session: await this.get(id) };
  }

  /** The forks of a base id: listed from the store once, then kept up to date in memory. */
  private async forksOf(base: string): Promise<Set<string>> {
    let forks = this.forks.get(base);
    if (!forks) {
      const names = await listSubStores(this.options.root, 'sessions');
      forks = new Set(names.filter((n) => n.startsWith(`${base}~`)));
      this.forks.set(base, forks);
    }
    return forks;
  }

  private async get(id: string): Promise<Session> {
    if (this.closed) throw new UsageError('the proxy is shutting down');
    let entry = this.open.get(id);
    if (!entry) {
      const session = Session.open({
        ...this.options.session,
        dir: sessionStoreDir(this.options.root, id),
        sessionId: id,
      });
      entry = { session, used: 0 };
      this.open.set(id, entry);
      session.catch(() => this.open.delete(id));
      await this.trim(id);
    }
    entry.used = ++this.tick;
    return entry.session;
  }

  /** Closes a session (it failed mid-change); the next call opens it again from its log. */
  async discard(id: string): Promise<void> {
    const entry = this.open.get(id);
    if (!entry) return;
    this.open.delete(id);
    await entry.session.then((s) => s.close()).catch(() => undefined);
  }

  /** Closes least recently used sessions beyond the limit, skipping any with a call in flight. */
  private async trim(keep: string): Promise<void> {
    if (this.open.size <= this.options.maxOpen) return;
    const idle = [...this.open.entries()]
      .filter(([id]) => id !== keep && !this.locks.has(id.split('~')[0]!))
      .sort((a, b) => a[1].used - b[1].used);
    for (const [id, entry] of idle.slice(0, this.open.size - this.options.maxOpen)) {
      this.open.delete(id);
      await entry.session.then((s) => s.close()).catch(() => undefined);
    }
  }

  /** Waits for calls in flight, then closes every session. */
  async close(): Promise<void> {
    this.closed = true;
    await Promise.all([...this.locks.values()].map((p) => p.catch(() => undefined)));
    const all = [...this.open.values()];
    this.open.clear();
    for (const e of all) await e.session.then((s) => s.close()).catch(() => undefined);
  }
}
