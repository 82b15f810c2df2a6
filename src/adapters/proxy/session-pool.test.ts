import { describe, expect, it } from 'vitest';
import type { Message } from '../../harness/messages.js';
import { derivedSessionId } from './session-pool.js';

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
