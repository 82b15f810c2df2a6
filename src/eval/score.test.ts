import { describe, expect, it } from 'vitest';
import { percentile, scoreQuestion, summarizeRows } from './score.js';
import type { EvalQuestion, EvalRow } from './types.js';

// A stand-in tokenizer whose counts are obvious by hand: one token per character.
const chars = (s: string) => s.length;

const question = (over: Partial<EvalQuestion> = {}): EvalQuestion => ({
  id: 'q',
  trajectory: 't',
  asked_after_step: 50,
  question: 'which port?',
  gold_steps: [3, 7],
  latest_step: 7,
  answer: 'port: 1100',
  kind: 'evolving-value',
  ...over,
});

describe('scoreQuestion', () => {
  it('hit, latest_hit, pages, tokens and gold_tokens as the protocol defines them', () => {
    const row = scoreQuestion({
      question: question(),
      pages: [
        { step_id: 7, content: 'x port: 1100' }, // gold, latest, holds the answer: 12
        { step_id: 3, content: 'port: 1000' }, // gold, no answer: 10
        { step_id: 9, content: 'port: 1100!' }, // not gold, holds the answer: 11
      ],
      count: chars,
      scanMs: 1.5,
    });
    expect(row).toEqual({
      id: 'q',
      trajectory: 't',
      kind: 'evolving-value',
      hit: true,
      latest_hit: true,
      pages: 3,
      tokens: 33,
      gold_tokens: 22,
      paged_steps: [7, 3, 9],
      scan_ms: 1.5,
    });
  });

  it('an answer only in an older gold page is a hit but not a latest hit', () => {
    const row = scoreQuestion({
      question: question(),
      pages: [{ step_id: 3, content: 'port: 1100' }],
      count: chars,
    });
    expect([row.hit, row.latest_hit, row.gold_tokens]).toEqual([true, false, 10]);
  });

  it('an answer split across two pages is not a hit', () => {
    const row = scoreQuestion({
      question: question(),
      pages: [
        { step_id: 7, content: 'port:' },
        { step_id: 7, content: ' 1100' },
      ],
      count: chars,
    });
    expect(row.hit).toBe(false);
  });

  it('no pages: a miss with zero tokens', () => {
    const row = scoreQuestion({ question: question(), pages: [], count: chars });
    expect([row.hit, row.pages, row.tokens, row.gold_tokens]).toEqual([false, 0, 0, 0]);
  });
});

const row = (over: Partial<EvalRow>): EvalRow => ({
  id: 'r',
  trajectory: 't',
  kind: 'paraphrase',
  hit: false,
  latest_hit: false,
  pages: 0,
  tokens: 0,
  gold_tokens: 0,
  paged_steps: [],
  scan_ms: 0,
  ...over,
});

describe('summarizeRows', () => {
  it('computes every summary field from the rows', () => {
    const s = summarizeRows([
      row({
        kind: 'evolving-value',
        hit: true,
        latest_hit: true,
        pages: 2,
        tokens: 100,
        gold_tokens: 40,
        scan_ms: 4,
        family: 'cline',
        trajectory: 'a',
      }),
      row({
        kind: 'evolving-value',
        hit: true,
        latest_hit: false,
        pages: 1,
        tokens: 50,
        gold_tokens: 50,
        scan_ms: 1,
        family: 'cline',
        trajectory: 'b',
      }),
      row({ kind: 'error-lookup', hit: false, pages: 3, tokens: 250, gold_tokens: 0, scan_ms: 3 }),
      row({ kind: 'error-lookup', hit: true, pages: 0, tokens: 0, scan_ms: 2, trajectory: 'b' }),
    ]);
    expect(s).toEqual({
      questions: 4,
      hit_rate: 0.75,
      latest_hit_rate_evolving: 0.5,
      mean_pages: 1.5,
      mean_tokens: 100,
      token_precision: 90 / 400,
      no_page_rate: 0.25,
      by_kind: { 'error-lookup': 0.5, 'evolving-value': 1 },
      scan_latency_ms: { p50: 2, p99: 4 },
      by_family: {
        cline: {
          questions: 2,
          hit_rate: 1,
          latest_hit_rate_evolving: 0.5,
          token_precision: 90 / 150,
          mean_tokens: 75,
        },
        other: {
          questions: 2,
          hit_rate: 0.5,
          latest_hit_rate_evolving: null,
          token_precision: 0,
          mean_tokens: 125,
        },
      },
      by_session: {
        a: {
          questions: 1,
          hit_rate: 1,
          latest_hit_rate_evolving: 1,
          token_precision: 0.4,
          mean_tokens: 100,
        },
        b: {
          questions: 2,
          hit_rate: 1,
          latest_hit_rate_evolving: 0,
          token_precision: 1,
          mean_tokens: 25,
        },
        t: {
          questions: 1,
          hit_rate: 0,
          latest_hit_rate_evolving: null,
          token_precision: 0,
          mean_tokens: 250,
        },
      },
    });
  });

  it('reports null where a rate has no denominator', () => {
    const s = summarizeRows([row({ kind: 'paraphrase' })]);
    expect(s.latest_hit_rate_evolving).toBeNull();
    expect(s.token_precision).toBeNull();
    expect(s.no_page_rate).toBe(1);
  });

  it('by_kind keys are sorted by code point, whatever the row order', () => {
    const s = summarizeRows([row({ kind: 'paraphrase' }), row({ kind: 'command-lookup' })]);
    expect(Object.keys(s.by_kind)).toEqual(['command-lookup', 'paraphrase']);
  });
});

describe('percentile', () => {
  it('nearest rank', () => {
    expect(percentile([5, 1, 3, 2, 4], 50)).toBe(3);
    expect(percentile([5, 1, 3, 2, 4], 99)).toBe(5);
    expect(percentile([7], 50)).toBe(7);
    expect(percentile([], 50)).toBe(0);
  });
});
