import { describe, expect, it } from 'vitest';
import type { AcceptanceCase } from './case-schema.js';
import type { CallResult } from './observe.js';
import { compareCall, type Deviation, type FloorOutcome, presentOn, scoreRun } from './score.js';

const input = (live: boolean) =>
  ({
    sessions: {
      main: {
        history: [
          {
            record: 'alpha',
            marker: 'zephyr',
            archived: true,
            ...(live ? { host_context: 'live' as const } : {}),
            tool: { name: 'Bash', input: {}, output: 'zephyr' },
          },
        ],
      },
    },
    store: [],
    calls: [{ session: 'main', prompt: 'zephyr?' }],
  }) satisfies AcceptanceCase['input'];

const allowance: AcceptanceCase['strictness_allowed'][number] = {
  conjunct: 'record_in_live_context',
  description: 'not paged again while live',
  present_when: { 'sessions.main.history.0.host_context': 'live' },
  absence_case_id: 'absent',
};

function doc(id: string, cls: 'safety' | 'liveness', live: boolean, allowed = [allowance]) {
  return {
    id,
    title: id,
    class: cls,
    profiles: ['normative'],
    requirements: ['CONF-13'],
    input: input(live),
    expect: { calls: [{ paged: { includes: ['alpha'] } }] },
    strictness_allowed: cls === 'liveness' ? allowed : [],
    source: [{ surface: 'code', path: 'src/index.ts', marker: 'x' }],
  } as AcceptanceCase;
}

const stop: Deviation = { direction: 'stop', message: 'call 0: alpha was not paged in' };
const go: Deviation = { direction: 'go', message: 'call 0: the model got "secret"' };

function outcome(
  d: AcceptanceCase,
  deviations: Deviation[],
  declared: string[] = [],
): FloorOutcome {
  return { doc: d, settled: null, deviations, declared };
}

/** The case under test and its absence case, scored together as one run. */
function score(
  main: FloorOutcome,
  absence: FloorOutcome | null = outcome(doc('absent', 'liveness', false), []),
) {
  const run = absence ? [main, absence] : [main];
  return scoreRun(run)[0]!;
}

describe('scoring (contract 003): declarations and their structural limits', () => {
  it('a floor match passes; a stop deviation without a declaration fails and names what could be declared', () => {
    expect(score(outcome(doc('c', 'liveness', true), []))).toMatchObject({
      verdict: 'pass',
      reason: '',
    });
    const r = score(outcome(doc('c', 'liveness', true), [stop]));
    expect(r.verdict).toBe('fail');
    expect(r.reason).toContain('a stricter adapter must declare record_in_live_context');
  });

  it('a declared, listed, present and demonstrated conjunct excuses a liveness stop deviation', () => {
    const r = score(outcome(doc('c', 'liveness', true), [stop], ['record_in_live_context']));
    expect(r).toMatchObject({ verdict: 'pass', strictness: ['record_in_live_context'] });
  });

  it('limit 1, stop-direction only: a go deviation is never excused', () => {
    const r = score(outcome(doc('c', 'liveness', true), [stop, go], ['record_in_live_context']));
    expect(r.verdict).toBe('fail');
  });

  it('limit 2, liveness only: a safety case rejects every declaration', () => {
    const r = score(outcome(doc('c', 'safety', true), [stop], ['record_in_live_context']));
    expect(r.verdict).toBe('fail');
  });

  it('limit 3, named conjunct: a conjunct the case does not list fails, even alongside a listed one', () => {
    const unlisted = score(outcome(doc('c', 'liveness', true), [stop], ['halts_on_tuesdays']));
    expect(unlisted.verdict).toBe('fail');
    expect(unlisted.reason).toContain(
      'declared halts_on_tuesdays is not a strictness this case allows',
    );
    const both = score(
      outcome(doc('c', 'liveness', true), [stop], ['record_in_live_context', 'halts_on_tuesdays']),
    );
    expect(both.verdict).toBe('fail');
  });

  it('limit 5, bound to the input: present_when must hold on the case and not on its absence case', () => {
    const absentHere = score(
      outcome(doc('c', 'liveness', false), [stop], ['record_in_live_context']),
    );
    expect(absentHere.verdict).toBe('fail');
    expect(absentHere.reason).toContain('not present on this input');
    const presentThere = score(
      outcome(doc('c', 'liveness', true), [stop], ['record_in_live_context']),
      outcome(doc('absent', 'liveness', true), []),
    );
    expect(presentThere.verdict).toBe('fail');
    expect(presentThere.reason).toContain('present on absence case absent too');
    const unbound = score(
      outcome(
        doc('c', 'liveness', true, [
          { ...allowance, present_when: { 'sessions.main.nothing': true } },
        ]),
        [stop],
        ['record_in_live_context'],
      ),
    );
    expect(unbound.verdict).toBe('fail');
  });

  it('undemonstrated: the absence case must be in the run and pass on the floor, without an excuse', () => {
    const missing = score(
      outcome(doc('c', 'liveness', true), [stop], ['record_in_live_context']),
      null,
    );
    expect(missing.verdict).toBe('fail');
    expect(missing.reason).toContain('absence case absent is not in this run');
    const failing = score(
      outcome(doc('c', 'liveness', true), [stop], ['record_in_live_context']),
      outcome(doc('absent', 'liveness', false), [stop]),
    );
    expect(failing.verdict).toBe('fail');
    expect(failing.reason).toContain('did not pass on the floor');
    const errored = score(outcome(doc('c', 'liveness', true), [stop], ['record_in_live_context']), {
      ...outcome(doc('absent', 'liveness', false), []),
      settled: { verdict: 'not-applicable', reason: 'outside the set' },
    });
    expect(errored.verdict).toBe('fail');
  });

  it('not-applicable and error outcomes keep their verdict and reason', () => {
    const r = scoreRun([
      {
        ...outcome(doc('c', 'safety', false), []),
        settled: { verdict: 'not-applicable', reason: 'requires CONF-07' },
      },
    ]);
    expect(r[0]).toMatchObject({ verdict: 'not-applicable', reason: 'requires CONF-07' });
  });

  it('present_when reads dotted paths into the input, array indexes included', () => {
    expect(presentOn({ 'sessions.main.history.0.host_context': 'live' }, input(true))).toBe(true);
    expect(presentOn({ 'sessions.main.history.0.host_context': 'live' }, input(false))).toBe(false);
    expect(presentOn({ 'calls.0.prompt': 'zephyr?' }, input(false))).toBe(true);
  });
});

const result = (over: Partial<CallResult>): CallResult => ({
  proceeded: true,
  paged: [],
  refused: [],
  unverified: null,
  page_tokens: 0,
  carried_over: [],
  model_input: '',
  ...over,
});

describe('the direction of each deviation', () => {
  it('less than the floor is stop; more is go', () => {
    const dirs = (e: Parameters<typeof compareCall>[0], r: CallResult) =>
      compareCall(e, r, 0).map((d) => d.direction);
    expect(dirs({ paged: { includes: ['a'] } }, result({}))).toEqual(['stop']);
    expect(dirs({ paged: { excludes: ['a'] } }, result({ paged: ['a'] }))).toEqual(['go']);
    expect(dirs({ paged: { exactly: ['a'] } }, result({ paged: ['b'] }))).toEqual(['stop', 'go']);
    expect(dirs({ proceeded: true }, result({ proceeded: false }))).toEqual(['stop']);
    expect(
      dirs({ refused: { excludes: ['a'] } }, result({ refused: [{ record: 'a', error: 'X' }] })),
    ).toEqual(['stop']);
    expect(
      dirs({ refused: { includes: [{ record: 'a', error: 'IntegrityCheckError' }] } }, result({})),
    ).toEqual(['go']);
    expect(dirs({ model_input: { contains: ['x'] } }, result({}))).toEqual(['stop']);
    expect(dirs({ model_input: { excludes: ['x'] } }, result({ model_input: 'x' }))).toEqual([
      'go',
    ]);
    expect(dirs({ pages_verified: true }, result({ unverified: 'no' }))).toEqual(['go']);
    expect(dirs({ page_tokens_max: 5 }, result({ page_tokens: 6 }))).toEqual(['go']);
    expect(dirs({ previous_pages_gone: true }, result({ carried_over: ['a'] }))).toEqual(['go']);
  });

  it("a failed call's error is in the reason (a hook's internal error left nothing refused)", () => {
    const e = { refused: { includes: [{ record: 'a', error: 'IntegrityCheckError' }] } };
    const error = 'hook exited 70: contextfold: internal error: Error: EAGAIN';
    expect(compareCall(e, result({ error }), 0).map((d) => d.message)).toEqual([
      `call 0: a was not refused and reported, expected IntegrityCheckError (the call failed: ${error})`,
    ]);
    // Said once: a deviation that already names it is left as it is.
    const both = compareCall({ ...e, proceeded: true }, result({ proceeded: false, error }), 0);
    expect(both.map((d) => d.message)).toEqual([
      `call 0: the model was not called (${error})`,
      'call 0: a was not refused and reported, expected IntegrityCheckError',
    ]);
    expect(
      compareCall(
        e,
        result({ error, refused: [{ record: 'a', error: 'IntegrityCheckError' }] }),
        0,
      ),
    ).toEqual([]);
  });

  it('a refusal of the integrity family matches IntegrityCheckError, not the other way round', () => {
    const e = { refused: { includes: [{ record: 'a', error: 'IntegrityCheckError' }] } };
    expect(
      compareCall(e, result({ refused: [{ record: 'a', error: 'PathContainmentError' }] }), 0),
    ).toEqual([]);
    const f = { refused: { includes: [{ record: 'a', error: 'PathContainmentError' }] } };
    expect(
      compareCall(f, result({ refused: [{ record: 'a', error: 'IntegrityCheckError' }] }), 0),
    ).toHaveLength(1);
  });
});
