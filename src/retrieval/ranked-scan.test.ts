import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import type { FeatureWeights } from './linear-scorer.js';
import { RankedIndex } from './ranked-index.js';
import { MAX_DROPPED_TERMS } from './ranked-query.js';
import { RANKED_DEFAULTS, type RankedTuning, rankedScan } from './ranked-scan.js';

interface Turn {
  step: number;
  text: string;
  tokens?: number;
  summary?: string;
}

function indexOf(turns: readonly Turn[]): RankedIndex {
  const ix = new RankedIndex();
  for (const t of turns) {
    ix.add({ stepId: t.step, summary: t.summary ?? '', content: t.text, tokens: t.tokens ?? 20 });
  }
  return ix;
}

const caps = { perTurnCap: 3500, perCallCap: 3000 };
/** A scorer that only counts how much of the prompt a turn holds (mechanisms tested alone). */
const coverage: FeatureWeights = { turnN: 4 };
const only = (weights: FeatureWeights, more: Partial<RankedTuning> = {}) => ({
  ...caps,
  tuning: { weights, ...more },
});
const steps = (r: { selected: { step_id: number }[] }) => r.selected.map((p) => p.step_id);
const first = (r: { selected: { step_id: number }[] }) => r.selected[0]?.step_id;

const noise = (n: number, from = 100): Turn[] =>
  Array.from({ length: n }, (_, i) => ({ step: from + i, text: `noise${i} filler${i} words${i}` }));

describe('rankedScan: what is searched for', () => {
  it('a word in half the turns selects nothing on its own; with a rare word it does', () => {
    const turns = [
      ...Array.from({ length: 15 }, (_, i) => ({ step: i, text: `test run ${i}xx` })),
      ...noise(15),
    ];
    expect(rankedScan(indexOf(turns), 'test?', only(coverage)).selected).toEqual([]);
    expect(first(rankedScan(indexOf(turns), 'test 3xx', only(coverage)))).toBe(3);
  });

  it('a store of one turn answers the words it holds (no rule drops them)', () => {
    const ix = indexOf([{ step: 7, text: 'PostgreSQL running on port 5433' }]);
    const r = rankedScan(ix, 'Which port is PostgreSQL on?', caps);
    expect(steps(r)).toEqual([7]);
  });

  it('says which prompt words it does not search for, and why', () => {
    const ix = indexOf([{ step: 1, text: 'postgresql port 5433' }, ...noise(3)]);
    const r = rankedScan(ix, 'What port is postgres using now?', caps);
    expect(r.query_terms).toEqual(['port', 'postgr']);
    expect(r.dropped_terms).toEqual([
      { term: 'what', reason: 'stopword' },
      { term: 'is', reason: 'stopword' },
      { term: 'now', reason: 'time-cue' },
      { term: 'using', reason: 'not-in-store' },
    ]);
  });

  it('lists the first MAX_DROPPED_TERMS dropped words of a long prompt and counts the others', () => {
    // Every dropped word was listed: a pasted log of 1.5 MB made 1.2 MB of JSON in each result.
    const ix = indexOf([{ step: 1, text: 'postgresql port 5433' }, ...noise(3)]);
    const words = Array.from({ length: 500 }, (_, i) => `zqv${i}k`).join(' ');
    const r = rankedScan(ix, `What port is postgres using now? ${words}`, caps);
    expect(steps(r)).toEqual([1]);
    expect(r.dropped_terms).toHaveLength(MAX_DROPPED_TERMS);
    expect(r.dropped_terms.slice(0, 3)).toEqual([
      { term: 'what', reason: 'stopword' },
      { term: 'is', reason: 'stopword' },
      { term: 'now', reason: 'time-cue' },
    ]);
    const short = rankedScan(ix, `What port is postgres using now? ${words}`.slice(0, 40), caps);
    expect(short.dropped_terms_omitted).toBeUndefined();
    // Each word (and any sub-word of it) is dropped once: listed or counted, never lost.
    const all = rankedScan(ix, words, { ...caps });
    expect(all.dropped_terms.length + (all.dropped_terms_omitted ?? 0)).toBeGreaterThanOrEqual(500);
    expect(r.dropped_terms_omitted).toBe(
      (all.dropped_terms_omitted ?? 0) + all.dropped_terms.length + 4 - MAX_DROPPED_TERMS,
    );
  });

  it('a long prompt is searched by its rarest keys only, and says which it left out', () => {
    // Letters only (no sub-word splits, no stems): `common` is in every turn, `mid…` in two,
    // `rare…` in one. The limit keeps the rare keys, then mid keys by code point (a tie).
    const L = 'bcdfghjkmnpqrtvwxz';
    const word = (base: string, i: number) => `${base}${L[i % 18]}${L[Math.floor(i / 18)]}x`;
    const turns = Array.from({ length: 40 }, (_, i) => ({
      step: i,
      text: `common ${word('mid', i >> 1)} ${word('rare', i)}`,
    }));
    const ix = indexOf(turns);
    const mids = Array.from({ length: 20 }, (_, i) => word('mid', i));
    const prompt = `common ${mids.join(' ')} ${word('rare', 7)} ${word('rare', 30)}`;
    const r = rankedScan(ix, prompt, { ...caps, tuning: { maxQueryKeys: 4 } });
    const [m0, m1] = [...mids].sort();
    expect(r.query_terms).toEqual([m0, m1, word('rare', 30), word('rare', 7)].sort());
    const left = r.dropped_terms!.filter((d) => d.reason === 'key-limit').map((d) => d.term);
    expect(left).toHaveLength(19); // `common` and 18 mid keys
    expect(left).toContain('common');
    expect(steps(r)).toEqual(expect.arrayContaining([7, 30]));
    // Within the limit nothing is left out.
    const all = rankedScan(ix, prompt, caps);
    expect(all.dropped_terms!.filter((d) => d.reason === 'key-limit')).toEqual([]);
    expect(all.query_terms).toHaveLength(23);
  });

  it('prefix matching: postgres meets postgresql, configuration meets config', () => {
    const turns = [
      { step: 1, text: 'postgresql listening port 5433' },
      { step: 2, text: 'config loaded' },
      { step: 3, text: 'port 80 listening' },
      { step: 4, text: 'modules loaded' },
      ...noise(8),
    ];
    const ix = indexOf(turns);
    expect(first(rankedScan(ix, 'postgres port listening?', only(coverage)))).toBe(1);
    expect(first(rankedScan(ix, 'configuration loaded?', only(coverage)))).toBe(2);
  });

  it('identifier parts: a camelCase prompt finds the snake_case turn', () => {
    const turns = [{ step: 4, text: 'mix test test/session_live_test.exs' }, ...noise(9)];
    expect(steps(rankedScan(indexOf(turns), 'Is SessionLive green?', only(coverage)))).toEqual([4]);
  });
});

describe('rankedScan: the four-turn PostgreSQL store (issue 9), default tuning', () => {
  // The demo's turns 37, 91, 137 (README / IPCF §6) and a billing-table turn at 120.
  const base: Turn[] = [
    {
      step: 37,
      summary: 'PostgreSQL configured on Port 5433',
      text: '$ docker compose up -d postgres\nPostgreSQL running on port 5433',
    },
    {
      step: 91,
      summary: 'PostgreSQL switched to Port 5434 (conflict resolution)',
      text: '$ psql -p 5434 -U admin\nConflict resolved on port 5434',
    },
    {
      step: 137,
      summary: 'PostgreSQL port 5434 reverted back to Port 5433',
      text: "$ sed -i 's/5434/5433/' config.env\nPostgreSQL Port 5433 restored",
    },
  ];
  const billing: Turn[][] = [
    [
      {
        step: 120,
        summary: 'Migration V12 rolled back due to deadlocks',
        text: 'Deadlock detected in billing table; rolled back V12',
      },
    ],
    [
      {
        step: 120,
        summary: 'Migration V12 applied to production database',
        text: '$ python manage.py migrate V12__TenantBilling.sql\nMigration V12 applied',
      },
    ],
  ];

  it.each(billing.map((b, i) => [i, b] as const))(
    'the port question pages step 137 first; the two-part question 137 and 120 (variant %i)',
    (_, b) => {
      const ix = indexOf([...base, ...b]);
      const port = rankedScan(ix, 'What port are we using for PostgreSQL?', caps);
      expect(first(port)).toBe(137);
      const both = rankedScan(
        ix,
        'What port are we using for PostgreSQL, and which migration applied the billing table?',
        caps,
      );
      expect(steps(both).slice(0, 2).sort()).toEqual([120, 137]);
      // Both intents are owned, in the order they score.
      const owners = both.selected.filter((p) => p.alternative_of === undefined);
      expect(owners.map((p) => p.step_id).sort()).toEqual([120, 137]);
    },
  );
});

describe('rankedScan: CONF-13 semantics', () => {
  it('intent ownership: a dropped intent is never handed to another turn', () => {
    const turns = [
      { step: 5, text: 'alpha beta epsilon', tokens: 10 },
      { step: 3, text: 'gamma delta', tokens: 10 },
      { step: 8, text: 'gamma delta', tokens: 1000 },
      ...noise(20),
    ];
    const r = rankedScan(indexOf(turns), 'alpha beta epsilon gamma delta', {
      perTurnCap: 100,
      perCallCap: 3000,
      // Room for step 5 only: what is left (90) is under the smallest window (150).
      tuning: { weights: { turnN: 4, recNone: 1 }, minWindow: 150 },
    });
    expect(steps(r)).toEqual([5]);
    expect(r.budget_dropped.map((p) => [p.step_id, p.matched_terms])).toEqual([
      [8, ['delta', 'gamma']],
    ]);
  });

  it('the first pick is always admitted, bounded by the per-call cap', () => {
    const turns = [{ step: 1, text: 'kraken', tokens: 9000 }, ...noise(9)];
    const r = rankedScan(indexOf(turns), 'kraken', {
      perTurnCap: 3500,
      perCallCap: 3000,
      tuning: { weights: coverage, pageTokens: 5000, minWindow: 5000 },
    });
    expect(r.selected).toMatchObject([{ step_id: 1, cost: 3000 }]);
  });

  it('budget: pages within the caps, each prompt key owned at most once (property)', () => {
    const words = ['alpha', 'beta', 'gamma', 'delta', 'omega', 'sigma', 'kappa'];
    fc.assert(
      fc.property(
        fc.array(
          fc.record({ words: fc.subarray(words), tokens: fc.integer({ min: 1, max: 4000 }) }),
          { minLength: 1, maxLength: 30 },
        ),
        fc.subarray(words, { minLength: 1 }),
        fc.integer({ min: 50, max: 4000 }),
        (docs, prompt, perTurnCap) => {
          const ix = indexOf(
            docs.map((d, i) => ({ step: i, text: d.words.join(' '), tokens: d.tokens })),
          );
          const r = rankedScan(ix, prompt.join(' '), { perTurnCap, perCallCap: 3000 });
          const pageCap = Math.min(RANKED_DEFAULTS.pageTokens, 3000, perTurnCap);
          for (const p of r.selected) expect(p.cost).toBeLessThanOrEqual(pageCap);
          const total = r.selected.reduce((s, p) => s + p.cost, 0);
          if (r.selected.length > 1) expect(total).toBeLessThanOrEqual(perTurnCap);
          const owned = [...r.selected, ...r.budget_dropped].flatMap((p) => p.matched_terms);
          expect(new Set(owned).size).toBe(owned.length);
          expect(new Set(r.selected.map((p) => p.step_id)).size).toBe(r.selected.length);
        },
      ),
    );
  });

  it('a turn that owns an intent is not paged again as the companion of another owner', () => {
    // Found by the budget property: turn 1 was paged as 2's companion and again as an owner.
    const ix = indexOf([
      { step: 0, text: 'gamma', tokens: 1 },
      { step: 1, text: 'beta', tokens: 1 },
      { step: 2, text: 'omega kappa', tokens: 1 },
    ]);
    const r = rankedScan(ix, 'beta gamma omega kappa', { perTurnCap: 50, perCallCap: 3000 });
    const steps = r.selected.map((p) => p.step_id);
    expect(new Set(steps).size).toBe(steps.length);
    expect(r.selected.find((p) => p.step_id === 1)?.matched_terms).toEqual(['gamma']);
  });

  it('deterministic: the order turns were indexed in does not matter', () => {
    const turns: Turn[] = [
      { step: 1, text: 'port 5433 postgresql' },
      { step: 2, text: 'port 5434 postgresql' },
      { step: 3, text: 'migration billing applied' },
      { step: 4, text: 'migration billing rolled back' },
      ...noise(6),
    ];
    const prompt = 'postgresql port and the billing migration';
    const a = rankedScan(indexOf(turns), prompt, caps);
    const b = rankedScan(indexOf([...turns].reverse()), prompt, caps);
    expect(b).toEqual(a);
  });

  it('chronological labels follow the steps, not the scores (CONF-04); other pages are related', () => {
    const fact = 'deploy server port configured on host eu-west region';
    const turns = [
      { step: 10, text: `${fact} 5433 alpha` },
      { step: 20, text: `${fact} 5434` },
      { step: 30, text: `${fact} 5433` },
      { step: 40, text: 'port alpha' },
      ...noise(20),
    ];
    const r = rankedScan(indexOf(turns), `${fact} alpha`, {
      ...only(coverage, { temperature: 4, minProbability: 0.01 }),
    });
    // Step 10 owns the intent (it alone holds all of it); the other versions of the fact are
    // labelled with it by step; a page that shares little of it is only related.
    expect(r.selected.map((p) => [p.step_id, p.status])).toEqual([
      [10, 'historical'],
      [30, 'latest_chronological'],
      [20, 'superseded'],
      [40, 'related'],
    ]);
    expect(r.selected.slice(1).map((p) => p.alternative_of)).toEqual([10, 10, 10]);
  });
});

describe('rankedScan: features and weights', () => {
  const pair: Turn[] = [
    { step: 4, text: '[tool_use: Bash]\n{"command": "mix test test/foo_widget_test.exs"}' },
    { step: 5, text: 'Finished in 0.5 seconds\n10 tests, 0 failures' },
    ...noise(20),
  ];

  it('a tool result inherits its call’s keys (union) and is paged with its call', () => {
    const r = rankedScan(
      indexOf(pair),
      'How many tests in foo_widget_test?',
      only({ unionN: 4, shapeTurn: 1 }),
    );
    expect(r.selected.slice(0, 2).map((p) => [p.step_id, p.companion_of])).toEqual([
      [5, undefined],
      [4, 5],
    ]);
  });

  it('without the call’s keys the call alone is found', () => {
    expect(
      first(rankedScan(indexOf(pair), 'How many tests in foo_widget_test?', only(coverage))),
    ).toBe(4);
  });

  it('error prompts favour turns that report a failure (err)', () => {
    const turns = [
      { step: 1, text: 'git add priv/static failed: paths ignored' },
      { step: 2, text: 'git add priv/static done: paths staged' },
      ...noise(20),
    ];
    const ix = indexOf(turns);
    const w = only({ turnN: 4, err: 2, recNone: 1 });
    expect(first(rankedScan(ix, 'why did git add priv/static fail?', w))).toBe(1);
    expect(first(rankedScan(ix, 'git add priv/static?', w))).toBe(2);
  });

  it('a prompt asking for a hash favours the turn that holds one (shape)', () => {
    const turns = [
      { step: 1, text: '[main 0925f8d] modernize project structure' },
      { step: 2, text: 'I will modernize the project structure now' },
      ...noise(20),
    ];
    const r = rankedScan(
      indexOf(turns),
      'hash of the modernize project structure commit?',
      only({ turnN: 4, shape: 2, recNone: 1 }),
    );
    expect(first(r)).toBe(1);
  });

  it('"now" prompts favour the latest turn (recLatest), "first" the earliest (recEarliest)', () => {
    const turns = [
      { step: 10, text: 'deploy target staging' },
      { step: 20, text: 'deploy target staging' },
      ...noise(20),
    ];
    const w = only({ turnN: 4, recLatest: 2, recEarliest: 2 });
    expect(first(rankedScan(indexOf(turns), 'deploy target staging now?', w))).toBe(20);
    expect(first(rankedScan(indexOf(turns), 'first deploy target staging?', w))).toBe(10);
  });

  it('a time cue picks the first owner among equally good turns that hold the same keys', () => {
    const turns = [
      { step: 10, text: 'deploy target staging' },
      { step: 20, text: 'deploy target staging' },
      { step: 30, text: 'deploy target' },
      ...noise(20),
    ];
    // No recency weight: the two full turns tie (the later one ranks first); "first" takes the
    // earliest of them, never the turn that lacks a key, and timeBand 0 keeps the best.
    const cue = only(coverage, { temperature: 4 });
    expect(first(rankedScan(indexOf(turns), 'first deploy target staging?', cue))).toBe(10);
    expect(first(rankedScan(indexOf(turns), 'deploy target staging now?', cue))).toBe(20);
    const strict = only(coverage, { temperature: 4, timeBand: 0 });
    expect(first(rankedScan(indexOf(turns), 'first deploy target staging?', strict))).toBe(20);
  });

  it('without a time cue an owner is the latest version of its fact, also a later owner (CONF-13)', () => {
    // The older version is shorter, so it scores higher (len weighs against length here), but
    // within one logit of the newer one: it never owns the intent in the newer one's place.
    const turns = [
      { step: 10, text: 'kappa_flag off', tokens: 20 },
      { step: 20, text: 'kappa_flag on', tokens: 400 },
      { step: 30, text: 'sigma_mode strict', tokens: 20 },
      ...noise(20),
    ];
    const w = { turnN: 4, len: -3 };
    const owner = (r: ReturnType<typeof rankedScan>, step: number) =>
      r.selected.find((p) => p.step_id === step && p.alternative_of === undefined);
    const one = rankedScan(indexOf(turns), 'kappa_flag?', only(w, { temperature: 4 }));
    expect(first(one)).toBe(20);
    expect(one.selected.find((p) => p.step_id === 10)).toMatchObject({ alternative_of: 20 });
    const two = rankedScan(indexOf(turns), 'sigma_mode and kappa_flag?', only(w));
    expect(owner(two, 20)).toBeDefined();
    expect(owner(two, 10)).toBeUndefined();
    // Over budget: the latest version is dropped with its intent, the older one is not paged.
    const tight = rankedScan(indexOf(turns), 'sigma_mode and kappa_flag?', {
      perTurnCap: 60,
      perCallCap: 3000,
      tuning: { weights: w },
    });
    expect(steps(tight)).not.toContain(10);
    expect(tight.budget_dropped.map((p) => p.step_id)).toContain(20);
  });

  it('bounded work: only the most recent maxPostings turns of a key are read', () => {
    const turns = Array.from({ length: 40 }, (_, i) => ({ step: i, text: `widget build ${i}` }));
    const ix = indexOf([...turns, ...noise(60)]);
    const r = rankedScan(
      ix,
      'first widget build',
      only({ turnN: 1, recEarliest: 4 }, { maxPostings: 5, minEvidence: 0 }),
    );
    expect(first(r)).toBe(35);
  });
});

describe('rankedScan: live turns (after a compaction)', () => {
  const turns: Turn[] = [
    { step: 3, text: 'mix test\n49 tests, 0 failures renderer' },
    { step: 4, text: 'commit 3bb8701 renderer metadata' },
    ...noise(20, 10),
    { step: 60, text: 'all renderer tests pass, I will now work on the panel' },
    { step: 61, text: 'mix test\n49 tests, 0 failures renderer' },
  ];
  const prompt = 'How many renderer tests passed?';

  it('a live turn that holds the same specific keys and the asked shape owns the intent', () => {
    const r = rankedScan(indexOf(turns), prompt, { ...caps, liveFrom: 61 });
    expect(steps(r)).not.toContain(3);
    expect(r.live_owners).toEqual([61]);
  });

  it('a live turn that only shares words, without the answer shape, does not', () => {
    const r = rankedScan(indexOf(turns.slice(0, -1)), prompt, { ...caps, liveFrom: 60 });
    expect(first(r)).toBe(3);
    expect(steps(r).every((s) => s < 60)).toBe(true);
  });

  it('a live turn with the same words and shape but another value does not own the intent', () => {
    const later = { step: 61, text: 'mix test\n52 tests, 3 failures renderer' };
    const r = rankedScan(indexOf([...turns.slice(0, -1), later]), prompt, {
      ...caps,
      liveFrom: 61,
    });
    expect(steps(r)).toContain(3);
  });

  it('a live re-run with the same output still owns it (ids and other words aside)', () => {
    const rerun = { step: 61, text: 'mix test --seed 7\n49 tests, 0 failures renderer' };
    const r = rankedScan(indexOf([...turns.slice(0, -1), rerun]), prompt, {
      ...caps,
      liveFrom: 61,
    });
    expect(steps(r)).not.toContain(3);
    expect(r.live_owners).toEqual([61]);
  });

  it('a lossy turn (a compaction summary) is never paged and never owns', () => {
    const r = rankedScan(indexOf(turns), prompt, { ...caps, liveFrom: 60, lossy: [61] });
    expect(first(r)).toBe(3);
    expect(steps(r)).not.toContain(61);
  });
});
