import type { CaseClass, Verdict } from '../protocol/verdict.js';
import type { AcceptanceCase, CallExpect, CaseInputDoc, StoreExpect } from './case-schema.js';
import type { CallResult } from './observe.js';

/**
 * A deviation from the floor, and its direction (contract 003): `stop` is stricter than the
 * floor (a page not given, a turn stopped, a record refused); `go` is looser (something got
 * through that must not). Only a liveness case's `stop` deviations can ever be declared.
 */
export interface Deviation {
  direction: 'stop' | 'go';
  message: string;
}

/** What the store checks after the calls found. */
export interface StoreResult {
  /** Excluded texts found in files the integration wrote, with the first file each is in. */
  leaked: { text: string; file: string }[];
  /** Store effects that changed during the calls (something repaired or replaced them). */
  repaired: string[];
}

/** `PathContainmentError` is a kind of `IntegrityCheckError` (conformance/PROTOCOL.md §1.1). */
export function errorMatches(expected: string, actual: string): boolean {
  return (
    expected === actual || (expected === 'IntegrityCheckError' && actual === 'PathContainmentError')
  );
}

const show = (s: string) => JSON.stringify(s.length > 40 ? `${s.slice(0, 37)}...` : s);

function comparePaged(
  e: NonNullable<CallExpect['paged']>,
  r: CallResult,
  at: string,
  out: Deviation[],
) {
  for (const x of e.includes ?? [])
    if (!r.paged.includes(x))
      out.push({ direction: 'stop', message: `${at}: ${x} was not paged in` });
  for (const x of e.excludes ?? [])
    if (r.paged.includes(x)) out.push({ direction: 'go', message: `${at}: ${x} was paged in` });
  if (e.exactly) {
    for (const x of e.exactly)
      if (!r.paged.includes(x))
        out.push({ direction: 'stop', message: `${at}: ${x} was not paged in` });
    for (const x of r.paged)
      if (!e.exactly.includes(x))
        out.push({
          direction: 'go',
          message: `${at}: ${x} was paged in, expected only [${e.exactly.join(', ')}]`,
        });
  }
}

function compareRefused(
  e: NonNullable<CallExpect['refused']>,
  r: CallResult,
  at: string,
  out: Deviation[],
) {
  for (const want of e.includes ?? []) {
    const got = r.refused.filter((x) => x.record === want.record);
    if (!got.some((x) => errorMatches(want.error, x.error))) {
      const what = got.length
        ? `refused with ${got.map((x) => x.error).join(', ')}`
        : 'not refused and reported';
      out.push({
        direction: 'go',
        message: `${at}: ${want.record} was ${what}, expected ${want.error}`,
      });
    }
  }
  for (const x of e.excludes ?? [])
    if (r.refused.some((y) => y.record === x))
      out.push({ direction: 'stop', message: `${at}: ${x} was refused` });
}

/** The deviations of one call's result from its expectation. */
export function compareCall(e: CallExpect, r: CallResult, index: number): Deviation[] {
  const at = `call ${index}`;
  const out: Deviation[] = [];
  if (e.proceeded !== undefined && e.proceeded !== r.proceeded) {
    out.push({
      direction: e.proceeded ? 'stop' : 'go',
      message: `${at}: the model was ${r.proceeded ? '' : 'not '}called${r.error ? ` (${r.error})` : ''}`,
    });
  }
  if (e.paged) comparePaged(e.paged, r, at, out);
  if (e.refused) compareRefused(e.refused, r, at, out);
  for (const t of e.model_input?.contains ?? [])
    if (!r.model_input.includes(t))
      out.push({ direction: 'stop', message: `${at}: the model did not get ${show(t)}` });
  for (const t of e.model_input?.excludes ?? [])
    if (r.model_input.includes(t))
      out.push({ direction: 'go', message: `${at}: the model got ${show(t)}` });
  if (e.pages_verified && r.unverified)
    out.push({ direction: 'go', message: `${at}: ${r.unverified}` });
  if (e.page_tokens_max !== undefined && r.page_tokens > e.page_tokens_max) {
    out.push({
      direction: 'go',
      message: `${at}: pages hold ${r.page_tokens} tokens, the cap is ${e.page_tokens_max}`,
    });
  }
  if (e.previous_pages_gone && r.carried_over.length > 0) {
    out.push({
      direction: 'go',
      message: `${at}: still carries the previous call's ${r.carried_over.join(', ')}`,
    });
  }
  // A call that failed (a hook exiting 70 with an internal error) is why nothing was paged or
  // refused: the reason says so, once, rather than only what is missing.
  const first = out[0];
  if (r.error && first && !out.some((d) => d.message.includes(r.error!))) {
    out[0] = { ...first, message: `${first.message} (the call failed: ${r.error})` };
  }
  return out;
}

/** The deviations of the store after the calls. */
export function compareStore(e: StoreExpect | undefined, r: StoreResult): Deviation[] {
  const out: Deviation[] = [];
  if (!e) return out;
  for (const l of r.leaked)
    out.push({ direction: 'go', message: `store: ${l.file} holds ${show(l.text)}` });
  if (e.unrepaired)
    for (const x of r.repaired)
      out.push({ direction: 'go', message: `store: ${x} was repaired or replaced` });
  return out;
}

/** Reads a dotted path (`sessions.main.history.1.host_context`) out of a case input. */
export function valueAt(input: unknown, path: string): unknown {
  let cur: unknown = input;
  for (const seg of path.split('.')) {
    if (Array.isArray(cur) && /^\d+$/.test(seg)) cur = cur[Number(seg)];
    else if (typeof cur === 'object' && cur !== null && !Array.isArray(cur))
      cur = (cur as Record<string, unknown>)[seg];
    else return undefined;
  }
  return cur;
}

/** True when every `present_when` path of the input holds its value. */
export function presentOn(presentWhen: Record<string, unknown>, input: CaseInputDoc): boolean {
  return Object.entries(presentWhen).every(
    ([path, want]) => JSON.stringify(valueAt(input, path)) === JSON.stringify(want),
  );
}

/** A case's floor outcome for one subject, before declarations are weighed. */
export interface FloorOutcome {
  doc: AcceptanceCase;
  /** Null: the case ran; else the verdict it ended with without scoring (not-applicable, error). */
  settled: { verdict: 'not-applicable' | 'error'; reason: string } | null;
  deviations: Deviation[];
  declared: string[];
}

/** A case's verdict for one subject. */
export interface ScoredCase {
  case_id: string;
  class: CaseClass;
  verdict: Verdict;
  reason: string;
  /** Conjuncts that excused this liveness case (each declared, listed, present, demonstrated). */
  strictness: string[];
  /** Conjuncts the subject declared on its result for this case. */
  declared: string[];
}

/** Why a declared conjunct cannot excuse this case, or null when it can (contract 003 §Scoring). */
function unexcused(conj: string, o: FloorOutcome, floor: Map<string, FloorOutcome>): string | null {
  const allowed = o.doc.strictness_allowed.find((a) => a.conjunct === conj);
  if (!allowed) return `declared ${conj} is not a strictness this case allows`;
  if (!presentOn(allowed.present_when, o.doc.input))
    return `declared ${conj} is not present on this input (present_when does not hold)`;
  const absence = floor.get(allowed.absence_case_id);
  if (!absence)
    return `declared ${conj} is undemonstrated: absence case ${allowed.absence_case_id} is not in this run`;
  if (presentOn(allowed.present_when, absence.doc.input))
    return `declared ${conj} is undemonstrated: it is present on absence case ${allowed.absence_case_id} too`;
  if (absence.settled || absence.deviations.length > 0)
    return `declared ${conj} is undemonstrated: absence case ${allowed.absence_case_id} did not pass on the floor`;
  return null;
}

/**
 * Scores one subject's run (contract 003): a floor match passes; a safety case never deviates;
 * a liveness case may deviate only in the stop direction, and only when every conjunct the
 * subject declared on its result is listed on the case, present on its input, absent on the
 * absence case, and that absence case passed on the floor in the same run.
 *
 * @example
 * scoreRun(outcomes).filter((c) => c.verdict === 'fail').map((c) => c.reason); // [] when all pass
 */
export function scoreRun(outcomes: FloorOutcome[]): ScoredCase[] {
  const floor = new Map(outcomes.map((o) => [o.doc.id, o]));
  return outcomes.map((o) => {
    const base = {
      case_id: o.doc.id,
      class: o.doc.class,
      declared: o.declared,
      strictness: [] as string[],
    };
    if (o.settled) return { ...base, ...o.settled };
    if (o.deviations.length === 0) return { ...base, verdict: 'pass' as const, reason: '' };
    const first = o.deviations.map((d) => d.message).join('; ');
    const fail = (why: string) => ({ ...base, verdict: 'fail' as const, reason: why });
    if (o.doc.class === 'safety') return fail(first);
    if (o.deviations.some((d) => d.direction === 'go')) return fail(first);
    if (o.declared.length === 0) {
      const can = o.doc.strictness_allowed.map((a) => a.conjunct);
      return fail(
        can.length ? `${first} (a stricter adapter must declare ${can.join(' or ')})` : first,
      );
    }
    for (const conj of o.declared) {
      const why = unexcused(conj, o, floor);
      if (why) return fail(`${why}; ${first}`);
    }
    return {
      ...base,
      verdict: 'pass' as const,
      reason: `stricter by declared ${o.declared.join(', ')}`,
      strictness: [...o.declared],
    };
  });
}
