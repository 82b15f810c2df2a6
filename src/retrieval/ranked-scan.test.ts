import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { RankedIndex } from './ranked-index.js';
import { RANKED_DEFAULTS, type RankedTuning, rankedScan } from './ranked-scan.js';

interface Turn {
  step: number;
  text: string;
  tokens?: number;
}

function indexOf(turns: readonly Turn[]): RankedIndex {
  const ix = new RankedIndex();
  for (const t of turns) {
    ix.add({
      stepId: t.step,
      summary: '',
      content: t.text,
      tokens: t.tokens ?? 20,
    });
  }
  return ix;
}

const caps = { perTurnCap: 3500, perCallCap: 3000 };
/** The scan with only the mechanism under test switched on. */
const plain: Partial<RankedTuning> = {
  companions: false,
  maxAlternatives: 0,
  nextWeight: 0,
  latestBoost: 0,
  errorBoost: 0,
  shapeBoost: 0,
  prosePenalty: 0,
};
const steps = (r: { selected: { step_id: number }[] }) => r.selected.map((p) => p.step_id);

const noise = (n: number, from = 100): Turn[] =>
  Array.from({ length: n }, (_, i) => ({ step: from + i, text: `noise${i} filler${i} words${i}` }));

describe('rankedScan: selection', () => {
  it('a word in many turns selects nothing on its own (rarity weighting)', () => {
    const turns = [
      ...Array.from({ length: 6 }, (_, i) => ({ step: i, text: `test run ${i}xx` })),
      ...noise(4),
    ];
    expect(rankedScan(indexOf(turns), 'test?', { ...caps, tuning: plain }).selected).toEqual([]);
    // The same word with a rare companion word does select.
    const r = rankedScan(indexOf(turns), 'test 3xx', { ...caps, tuning: plain });
    expect(steps(r)).toEqual([3]);
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
    const t = { ...plain, maxPicks: 1 };
    expect(steps(rankedScan(ix, 'postgres port listening?', { ...caps, tuning: t }))).toEqual([1]);
    expect(steps(rankedScan(ix, 'configuration loaded?', { ...caps, tuning: t }))).toEqual([2]);
  });

  it('identifier parts: a camelCase prompt finds the snake_case turn', () => {
    const turns = [{ step: 4, text: 'mix test test/session_live_test.exs' }, ...noise(9)];
    const r = rankedScan(indexOf(turns), 'Is SessionLive green?', { ...caps, tuning: plain });
    expect(steps(r)).toEqual([4]);
  });

  it('among equally good turns the latest wins; "first" picks the earliest', () => {
    const turns = [
      { step: 10, text: 'server port 5433' },
      { step: 20, text: 'server port 5433' },
      ...noise(8),
    ];
    const ix = indexOf(turns);
    const t = { ...plain, maxPicks: 1 };
    expect(steps(rankedScan(ix, 'which server port?', { ...caps, tuning: t }))).toEqual([20]);
    expect(steps(rankedScan(ix, 'which server port at first?', { ...caps, tuning: t }))).toEqual([
      10,
    ]);
  });

  it('a clearly better older turn beats a weaker latest one', () => {
    const turns = [
      { step: 10, text: 'postgresql port 5433 configured in database.yml' },
      { step: 20, text: 'port' },
      ...noise(8),
    ];
    const r = rankedScan(indexOf(turns), 'postgresql port in database.yml', {
      ...caps,
      tuning: { ...plain, maxPicks: 1 },
    });
    expect(steps(r)).toEqual([10]);
  });
});

describe('rankedScan: CONF-13 semantics', () => {
  it('intent ownership: a dropped intent is never handed to an older turn', () => {
    const turns = [
      { step: 5, text: 'alpha beta epsilon', tokens: 10 },
      { step: 3, text: 'gamma delta', tokens: 10 },
      { step: 8, text: 'gamma delta', tokens: 1000 },
      ...noise(7),
    ];
    for (const maxAlternatives of [0, 2]) {
      const r = rankedScan(indexOf(turns), 'alpha beta epsilon gamma delta', {
        perTurnCap: 100,
        perCallCap: 3000,
        tuning: { ...plain, pageTokens: 3000, maxAlternatives },
      });
      expect(steps(r)).toEqual([5]);
      expect(r.budget_dropped.map((p) => [p.step_id, p.matched_terms])).toEqual([
        [8, ['delta', 'gamma']],
      ]);
    }
  });

  it('the first pick is always admitted (as the reference), bounded by the caps', () => {
    const turns = [{ step: 1, text: 'kraken', tokens: 9000 }, ...noise(9)];
    const r = rankedScan(indexOf(turns), 'kraken', {
      perTurnCap: 3500,
      perCallCap: 3000,
      tuning: { ...plain, pageTokens: 5000 },
    });
    expect(r.selected).toMatchObject([{ step_id: 1, cost: 3000 }]);
  });

  it('budget: costs never exceed the per-turn cap (after the first pick)', () => {
    fc.assert(
      fc.property(
        fc.array(
          fc.record({
            words: fc.subarray(['alpha', 'beta', 'gamma', 'delta', 'omega', 'sigma', 'kappa']),
            tokens: fc.integer({ min: 1, max: 4000 }),
          }),
          { minLength: 1, maxLength: 30 },
        ),
        fc.subarray(['alpha', 'beta', 'gamma', 'delta', 'omega', 'sigma', 'kappa'], {
          minLength: 1,
        }),
        fc.integer({ min: 50, max: 4000 }),
        (docs, words, perTurnCap) => {
          const ix = indexOf(
            docs.map((d, i) => ({ step: i, text: d.words.join(' '), tokens: d.tokens })),
          );
          const r = rankedScan(ix, words.join(' '), {
            perTurnCap,
            perCallCap: 3000,
            tuning: { maxAlternatives: 2 },
          });
          const pageCap = Math.min(RANKED_DEFAULTS.pageTokens, 3000, perTurnCap);
          for (const p of r.selected) expect(p.cost).toBeLessThanOrEqual(pageCap);
          const total = r.selected.reduce((s, p) => s + p.cost, 0);
          if (r.selected.length > 1) expect(total).toBeLessThanOrEqual(perTurnCap);
          // Each prompt key is owned at most once.
          const owned = [...r.selected, ...r.budget_dropped].flatMap((p) => p.matched_terms);
          expect(new Set(owned).size).toBe(owned.length);
        },
      ),
    );
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
});

describe('rankedScan: evidence from neighbours, errors, answer shapes', () => {
  const pair: Turn[] = [
    { step: 4, text: '[tool_use: Bash]\n{"command": "mix test test/foo_widget_test.exs"}' },
    { step: 5, text: 'Finished in 0.5 seconds\n10 tests, 0 failures' },
    ...noise(8),
  ];

  it('a tool result inherits its call’s keys and is paged with it', () => {
    const r = rankedScan(indexOf(pair), 'How many tests in foo_widget_test?', {
      ...caps,
      tuning: { ...plain, nextWeight: 1, companions: true },
    });
    expect(r.selected.map((p) => [p.step_id, p.companion_of])).toEqual([
      [5, undefined],
      [4, 5],
    ]);
  });

  it('without inheritance the call alone is found', () => {
    const r = rankedScan(indexOf(pair), 'How many tests in foo_widget_test?', {
      ...caps,
      tuning: plain,
    });
    expect(steps(r)).toEqual([4]);
  });

  it('error prompts favour turns that report a failure', () => {
    const turns = [
      { step: 1, text: 'git add priv/static failed: paths ignored' },
      { step: 2, text: 'git add priv/static done: paths staged' },
      ...noise(8),
    ];
    const ix = indexOf(turns);
    const t = { ...plain, maxPicks: 1, errorBoost: 0.5 };
    expect(
      steps(rankedScan(ix, 'why did git add priv/static fail?', { ...caps, tuning: t })),
    ).toEqual([1]);
    expect(steps(rankedScan(ix, 'git add priv/static?', { ...caps, tuning: t }))).toEqual([2]);
  });

  it('a prompt asking for a hash favours the turn that holds one', () => {
    const turns = [
      { step: 1, text: '[main 0925f8d] modernize project structure' },
      { step: 2, text: 'I will modernize the project structure now' },
      ...noise(8),
    ];
    const r = rankedScan(indexOf(turns), 'hash of the modernize project structure commit?', {
      ...caps,
      tuning: { ...plain, maxPicks: 1, shapeBoost: 1 },
    });
    expect(steps(r)).toEqual([1]);
  });

  it('alternatives: other candidates of an owned intent, labelled, within the budget', () => {
    const turns = [
      { step: 10, text: 'server port 5433 configured' },
      { step: 20, text: 'server port 5434 configured' },
      ...noise(8),
    ];
    const r = rankedScan(indexOf(turns), 'server port configured', {
      ...caps,
      tuning: { ...plain, maxAlternatives: 1, alternativeBand: 0.5 },
    });
    expect(r.selected.map((p) => [p.step_id, p.alternative_of, p.status])).toEqual([
      [20, undefined, 'latest_chronological'],
      [10, 20, 'historical'],
    ]);
    expect(r.selected[1]!.matched_terms).toEqual([]);
  });

  it('chronological labels follow the steps, not the scores (CONF-04)', () => {
    const turns = [
      { step: 10, text: 'server port 5433 configured on host' },
      { step: 20, text: 'server port 5434 configured' },
      { step: 30, text: 'server port 5433 configured' },
      ...noise(8),
    ];
    const r = rankedScan(indexOf(turns), 'server port configured on host', {
      ...caps,
      tuning: { ...plain, maxAlternatives: 2, alternativeBand: 0.3, recencyBand: 1 },
    });
    // The owner is step 10 (it alone matches "host"); its alternatives are newer.
    expect(r.selected.map((p) => [p.step_id, p.status])).toEqual([
      [10, 'historical'],
      [30, 'latest_chronological'],
      [20, 'superseded'],
    ]);
  });

  it('on "now" prompts the latest candidates are the alternatives', () => {
    const turns = [
      { step: 1, text: 'deploy target staging eu-west region' },
      { step: 2, text: 'deploy target staging' },
      { step: 3, text: 'deploy target staging' },
      { step: 4, text: 'deploy target production' },
      ...noise(8),
    ];
    const t = { ...plain, maxAlternatives: 1, alternativeBand: 0.1, latestBand: 1 };
    const best = rankedScan(indexOf(turns), 'deploy target staging eu-west region', {
      ...caps,
      tuning: t,
    });
    const latest = rankedScan(indexOf(turns), 'deploy target staging eu-west region now', {
      ...caps,
      tuning: t,
    });
    expect(best.selected.map((p) => p.step_id)).toEqual([1, 3]);
    expect(latest.selected.map((p) => p.step_id)).toEqual([1, 4]);
  });

  it('a result without a key of its own inherits its call only when it looks like the answer', () => {
    const turns = [
      { step: 1, text: '{"command": "tree lib -L 3"}' },
      { step: 2, text: 'zsh: command not found' },
      { step: 3, text: '{"command": "tree src -L 3"}' },
      { step: 4, text: 'src\n└── main.ts' },
      ...noise(8),
    ];
    const t = { ...plain, nextWeight: 1, companions: true, errorBoost: 0.5, maxPicks: 1 };
    const r = rankedScan(indexOf(turns), 'why could the tree of lib not be printed?', {
      ...caps,
      tuning: t,
    });
    expect(r.selected.map((p) => [p.step_id, p.companion_of])).toEqual([
      [2, undefined],
      [1, 2],
    ]);
    // Without the error cue the result holds nothing asked for: the call alone.
    const plainPrompt = rankedScan(indexOf(turns), 'the tree of lib', { ...caps, tuning: t });
    expect(steps(plainPrompt)).toEqual([1]);
  });
});

describe('rankedScan: bounded work', () => {
  it('reads only the most recent maxPostings turns of a key', () => {
    const turns = Array.from({ length: 40 }, (_, i) => ({ step: i, text: `widget build ${i}` }));
    const ix = indexOf([...turns, ...noise(60)]);
    const r = rankedScan(ix, 'widget', {
      ...caps,
      tuning: { ...plain, maxPostings: 5, maxPicks: 1, minGain: 0, recencyBand: 0 },
    });
    // Even "first" cannot reach past the window of recent postings.
    const first = rankedScan(ix, 'first widget', {
      ...caps,
      tuning: { ...plain, maxPostings: 5, maxPicks: 1, minGain: 0, earliestBand: 0 },
    });
    expect(steps(r)).toEqual([39]);
    expect(steps(first)).toEqual([35]);
  });
});
