import { describe, expect, it } from 'vitest';
import { isStepConflictError } from '../protocol/errors.js';
import { testStore } from '../test-utils/backend-store.js';
import { BACKENDS } from '../test-utils/pg.js';
import { Session } from './session.js';
import { stepClock } from './test-utils/session-helpers.js';

describe.each(BACKENDS)('on %s: two writers of one session', (backend) => {
  it('the one with a stale copy is refused, writes nothing, and reopens onto the other’s log', async () => {
    const store = testStore(backend, 'writers');
    const open = () => Session.open({ dir: store.where, budget: 4000, clock: stepClock() });
    const a = await open();
    const b = await open();
    await a.append([{ role: 'user', content: 'from A' }]);
    // B opened before A wrote: appending on its copy would put B's message at step 0 again.
    const refused = await b.append([{ role: 'user', content: 'from B' }]).catch((e: unknown) => e);
    expect(isStepConflictError(refused)).toBe(true);
    expect(String((refused as Error).message)).toMatch(/reopen the session/);
    await b.close();
    const b2 = await open();
    expect(b2.history().map((m) => m.content)).toEqual(['from A']);
    await b2.append([{ role: 'user', content: 'from B' }]);
    await a.close();
    await b2.close();
    const c = await open();
    expect(c.history().map((m) => m.content)).toEqual(['from A', 'from B']);
    await c.close();
  });
});
