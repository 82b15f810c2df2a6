import type { Matcher, RegexSpec } from './table-schema.js';

/** A match as UTF-16 indices of the scanned string, `[start, end)`. */
export interface MatchSpan {
  start: number;
  end: number;
}

/** A matcher compiled to a function. `secretlint` matchers are run separately (they are async). */
export type SyncMatch = (text: string) => MatchSpan[];

/** Compiles a regex spec, always global. Throws the engine's SyntaxError for a bad pattern. */
export function compileRegex(spec: RegexSpec, extraFlags = ''): RegExp {
  return new RegExp(spec.pattern, `${spec.flags}g${extraFlags}`);
}

function regexMatch(m: Extract<Matcher, { kind: 'regex' }>): SyncMatch {
  const group = m.group ?? 0;
  const re = compileRegex(m, group > 0 ? 'd' : '');
  const reject = m.reject_value ? new RegExp(m.reject_value.pattern, m.reject_value.flags) : null;
  const match = (text: string, offset: number, out: MatchSpan[]) => {
    for (const hit of text.matchAll(re)) {
      const value = hit[group];
      if (value === undefined || value === '') continue;
      if (reject?.test(value)) continue;
      const start = offset + (group > 0 ? hit.indices![group]![0] : hit.index);
      out.push({ start, end: start + value.length });
    }
  };
  if (!m.within) {
    return (text) => {
      const out: MatchSpan[] = [];
      match(text, 0, out);
      return out;
    };
  }
  // The regions do not overlap and each is scanned once on its own: linear in the text, where
  // a lookbehind to the region's start would cost a pass back over it for every match.
  const region = compileRegex(m.within);
  return (text) => {
    const out: MatchSpan[] = [];
    for (const r of text.matchAll(region)) match(r[0], r.index, out);
    return out;
  };
}

const PEM_BEGIN = /-----BEGIN[ A-Z0-9]{0,40}PRIVATE KEY(?: BLOCK)?-----/g;
const PEM_END = /-----END[ A-Z0-9]{0,40}PRIVATE KEY(?: BLOCK)?-----/g;
/** One line of an unterminated block: a break (real or JSON-escaped) and the line after it. */
const PEM_LINE = /(?:\r\n|\n|\r|\\r\\n|\\n)([^\r\n\\]*)/y;
/** Key material: optional line-number or quote prefix, then a base64 run. */
const PEM_BODY =
  /^[ \t]*(?:\d{1,7}[→\t:|][ \t]?)?(?:[>#*][ \t]?)?(?:[A-Za-z0-9+/=]{16,}|(?:Proc-Type|DEK-Info|Comment): .*)[ \t]*$/;

/** End of an unterminated block: the last following line that still looks like key material. */
function unterminatedEnd(text: string, from: number, limit: number): number {
  let end = from;
  PEM_LINE.lastIndex = from;
  for (;;) {
    const line = PEM_LINE.exec(text);
    if (!line || PEM_LINE.lastIndex > limit || !PEM_BODY.test(line[1]!)) break;
    end = PEM_LINE.lastIndex;
  }
  return end;
}

function pemBlockMatch(m: Extract<Matcher, { kind: 'pem-block' }>): SyncMatch {
  return (text) => {
    const out: MatchSpan[] = [];
    const begin = new RegExp(PEM_BEGIN.source, 'g');
    const endRe = new RegExp(PEM_END.source, 'g');
    let b = begin.exec(text);
    while (b) {
      const from = b.index + b[0].length;
      const limit = b.index + m.max_chars;
      endRe.lastIndex = from;
      const e = endRe.exec(text);
      const end =
        e && e.index + e[0].length <= limit
          ? e.index + e[0].length
          : unterminatedEnd(text, from, limit);
      out.push({ start: b.index, end });
      begin.lastIndex = Math.max(end, from);
      b = begin.exec(text);
    }
    return out;
  };
}

function mixedScriptMatch(m: Extract<Matcher, { kind: 'mixed-script' }>): SyncMatch {
  const base = new RegExp(`\\p{Script=${m.script}}`, 'u');
  const escaped = [...m.confusables].map((c) => `\\u{${c.codePointAt(0)!.toString(16)}}`).join('');
  const confusable = new RegExp(`[${escaped}]`, 'u');
  const word = /[\p{L}\p{M}]+/gu;
  return (text) => {
    // Most texts hold no look-alike at all: one pass settles it.
    if (!confusable.test(text) || !base.test(text)) return [];
    const out: MatchSpan[] = [];
    for (const w of text.matchAll(word)) {
      if (confusable.test(w[0]) && base.test(w[0])) {
        out.push({ start: w.index, end: w.index + w[0].length });
      }
    }
    return out;
  };
}

/**
 * Compiles a synchronous matcher. Throws (SyntaxError) on an invalid regex or script name; the
 * table loader turns that into a GuardTableError naming the pattern.
 *
 * @example
 * compileSyncMatcher({ kind: 'regex', pattern: 'ab+', flags: 'i' })('xABBy'); // [{ start: 1, end: 4 }]
 */
export function compileSyncMatcher(m: Matcher): SyncMatch | null {
  switch (m.kind) {
    case 'regex':
      return regexMatch(m);
    case 'pem-block':
      return pemBlockMatch(m);
    case 'mixed-script':
      return mixedScriptMatch(m);
    case 'secretlint':
    case 'repeated-value':
      return null;
  }
}
