import { afterAll, describe, expect, it } from 'vitest';
import type { Message } from '../../harness/messages.js';
import { beginCall, endCall } from '../../harness/per-call.js';
import { Session } from '../../harness/session.js';
import { tempDir } from '../../test-utils/temp-dir.js';
import { derivedSessionId, SessionPool, sessionStoreDir } from './session-pool.js';

describe('derivedSessionId', () => {
  const user: Message = { role: 'user', content: 'Fix the failing test' };
  const reply: Message = { role: 'assistant', content: 'On it.' };
  const next: Message = { role: 'user', content: 'Now the changelog' };

  it('gives a conversation the same id on its first call and every later one', () => {
    // Without a system prompt the first call used to get another id than the rest.
    const id = derivedSessionId('openai', [user]);
    expect(derivedSessionId('openai', [user, reply])).toBe(id);
    expect(derivedSessionId('openai', [user, reply, next])).toBe(id);
    const system: Message = { role: 'system', content: 'Be terse.' };
    const withSystem = derivedSessionId('openai', [system, user]);
    expect(derivedSessionId('openai', [system, user, reply, next])).toBe(withSystem);
    expect(withSystem).not.toBe(id);
  });

  it('differs by API and by opening prompt', () => {
    expect(derivedSessionId('anthropic', [user])).not.toBe(derivedSessionId('openai', [user]));
    expect(derivedSessionId('openai', [next])).not.toBe(derivedSessionId('openai', [user]));
  });
});

describe('SessionPool.resolve with a changed system prompt', () => {
  const tmp = tempDir('cf-pool-');
  afterAll(() => tmp.cleanup());
  const sys = (content: string): Message => ({ role: 'system', content });
  const msg = (role: 'user' | 'assistant', content: string): Message => ({ role, content });
  const options = { budget: 4000, tokenizer: 'reference' as const };

  it('goes on in the session, or in the fork holding more of the conversation (one an older version started)', async () => {
    const root = tmp.dir;
    const first = new SessionPool({ root, session: options, maxOpen: 8 });
    const opened = await first.resolve('chat', [sys('day 1'), msg('user', 'u1')]);
    expect(opened.id).toBe('chat');
    await beginCall(opened.session, [sys('day 1'), msg('user', 'u1')]);
    await endCall(opened.session);
    // An older version forked the conversation when its system prompt changed.
    const old = await Session.open({
      ...options,
      dir: sessionStoreDir(root, 'chat~0123456789abcdef'),
    });
    const forked = [sys('day 2'), msg('user', 'u1'), msg('assistant', 'a1'), msg('user', 'u2')];
    await beginCall(old, forked);
    await endCall(old);
    await old.close();
    await first.close();

    const pool = new SessionPool({ root, session: options, maxOpen: 8 });
    const next = [sys('day 3'), ...forked.slice(1), msg('assistant', 'a2'), msg('user', 'u3')];
    expect((await pool.resolve('chat', next)).id).toBe('chat~0123456789abcdef');
    // Another conversation from the same opening continues only the session itself.
    const other = [sys('day 3'), msg('user', 'u1'), msg('assistant', 'b1'), msg('user', 'b2')];
    expect((await pool.resolve('chat', other)).id).toBe('chat');
    // A prompt that differs after the system prompt still starts a fork.
    expect((await pool.resolve('chat', [sys('day 3'), msg('user', 'v1')])).id).toMatch(
      /^chat~[0-9a-f]{16}$/,
    );
    await pool.close();
  });
});
