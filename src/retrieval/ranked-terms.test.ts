import { spawnSync } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import {
  distinctRankedTerms,
  MAX_KEY_LENGTH,
  proseCounts,
  proseRatio,
  proseShare,
  rankedTerms,
  rankedTermsUncached,
  stemWord,
} from './ranked-terms.js';

describe('rankedTerms: identifier splitting', () => {
  it('paths: the whole path, its dotted segment, and every part', () => {
    expect(rankedTerms('Read priv/static/assets/app.js')).toEqual([
      'read',
      'priv/static/assets/app.js',
      'app.js',
      'priv',
      'static',
      'asset',
      'app',
      'js',
    ]);
  });

  it('camelCase and snake_case: the whole identifier, its joined form and the sub-words', () => {
    expect(rankedTerms('SignalScorer')).toEqual(['signalscorer', 'signal', 'scorer']);
    expect(rankedTerms('phoenix_live_view')).toEqual([
      'phoenix_live_view',
      'phoenixliveview',
      'phoenix',
      'live',
      'view',
    ]);
    expect(rankedTerms('HTTPServer')).toEqual(['httpserver', 'http', 'server']);
  });

  it('snake_case meets CamelCase through the joined form', () => {
    const snake = new Set(rankedTerms('session_live'));
    expect(rankedTerms('SessionLive').every((k) => snake.has(k))).toBe(true);
  });

  it('dotted names and versions keep the whole compound', () => {
    expect(rankedTerms('Oban.Engines.Lite')).toEqual(
      expect.arrayContaining(['oban.engines.lite', 'oban', 'engin', 'lite']),
    );
    expect(rankedTerms('Aider v0.85.2')).toEqual(['aider', 'v0.85.2', 'v0', '85']);
  });

  it('file:line references keep the file and the line number', () => {
    const keys = rankedTerms('transcript_renderer_test.exs:728');
    expect(keys).toEqual(
      expect.arrayContaining([
        'transcript_renderer_test.exs:728',
        'transcript_renderer_test.exs',
        'transcript_renderer_test',
        '728',
      ]),
    );
  });

  it('stopwords and one-character parts are not keys; repeats are kept (term frequency)', () => {
    expect(rankedTerms('What did you do with the test? The test, I mean.')).toEqual([
      'test',
      'test',
      'mean',
    ]);
  });

  it('JSON-escaped line breaks are separators, not letters', () => {
    expect(rankedTerms('failed:\\nretry')).toEqual(['fail', 'retry']);
  });

  it('blobs longer than MAX_KEY_LENGTH are not keys, their parts may be', () => {
    const blob = 'a'.repeat(MAX_KEY_LENGTH + 1);
    expect(rankedTerms(blob)).toEqual([]);
    expect(rankedTerms(`x/${blob}/config.json`)).toEqual(
      expect.arrayContaining(['config.json', 'config', 'json']),
    );
  });

  it('folds case as the protocol token fold does (Turkish dotted I)', () => {
    expect(rankedTerms('İNCİ')).toEqual(['inci']);
  });

  it('distinctRankedTerms keeps first-occurrence order', () => {
    expect(distinctRankedTerms('test port test')).toEqual(['test', 'port']);
  });
});

describe('stemWord', () => {
  it('maps inflections of one word onto one key', () => {
    expect(stemWord('tests')).toBe(stemWord('test'));
    expect(stemWord('failed')).toBe(stemWord('fail'));
    expect(stemWord('configured')).toBe(stemWord('configuring'));
    expect(stemWord('libraries')).toBe('library');
    expect(stemWord('running')).toBe('run');
  });

  it('leaves short words, numbers and -ss/-us/-is endings alone', () => {
    expect(['bd', 'api', '5433', 'class', 'status', 'analysis'].map(stemWord)).toEqual([
      'bd',
      'api',
      '5433',
      'class',
      'status',
      'analysis',
    ]);
  });
});

describe('proseRatio', () => {
  it('is high for narration, low for data and code, neutral for short texts', () => {
    const narration =
      'I will now look at the file and then we can see what the problem is. '.repeat(6);
    const code = 'defmodule X do\n  def f(x) when is_integer(x), do: x + 1\nend\n'.repeat(10);
    expect(proseRatio(narration)).toBeGreaterThan(0.3);
    expect(proseRatio(code)).toBeLessThan(0.05);
    expect(proseRatio('the the the')).toBe(0);
  });
});

describe('rankedTerms: the compound cache', () => {
  const words = fc.constantFrom(
    'SignalScorer',
    'priv/static/app.js',
    'v0.85.2',
    'phoenix_live_view',
    'İNCİ',
    'tests',
    'a.b-c:d@e',
    '\\n',
    '806.5KB',
    'HTTPServer2Go',
  );
  const text = fc
    .array(fc.oneof(words, fc.string({ unit: 'grapheme', maxLength: 12 })), { maxLength: 40 })
    .map((parts) => parts.join(' '));

  it('gives the keys of the uncached definition, cold or warm (property)', () => {
    fc.assert(
      fc.property(text, (t) => {
        const want = rankedTermsUncached(t);
        expect(rankedTerms(t)).toEqual(want); // cold, or warm from earlier runs
        expect(rankedTerms(t)).toEqual(want); // warm
      }),
      { numRuns: 300 },
    );
  });

  it('a cached compound is not changed by what the caller does with the keys', () => {
    const first = rankedTerms('SignalScorer');
    first.length = 0;
    expect(rankedTerms('SignalScorer')).toEqual(['signalscorer', 'signal', 'scorer']);
  });
});

describe('rankedTerms: ASCII texts (scanned by hand)', () => {
  // Escapes (`\n` is a space, `\\n` a backslash then a space), separators at either end,
  // runs of separators, underscores, case changes, long compounds and runs.
  const piece = fc.constantFrom(
    '\\n',
    '\\r',
    '\\t',
    '\\\\n',
    '\\x',
    'a\\b',
    '\\',
    '-',
    './',
    '@@',
    '::',
    '_',
    '__init__',
    'HTTPServer2Go',
    'SignalScorer',
    'ABc',
    'priv/static/app.js',
    '2026-03-01T00:44:07Z',
    'v0.85.2',
    'The',
    'because',
    'x'.repeat(130),
    'ab/'.repeat(50),
    '\r\n',
  );
  const ascii = fc
    .array(
      fc.oneof(
        piece,
        fc.string({
          unit: fc.integer({ min: 0, max: 127 }).map((c) => String.fromCharCode(c)),
          maxLength: 8,
        }),
      ),
      {
        maxLength: 60,
      },
    )
    .map((parts) => parts.join(''));

  it('gives the keys of the regex definition, cold or warm (property)', () => {
    fc.assert(
      fc.property(ascii, (t) => {
        const want = rankedTermsUncached(t);
        expect(rankedTerms(t)).toEqual(want);
        expect(rankedTerms(t)).toEqual(want);
        // A non-ASCII unit that is neither a key nor a letter sends the text to the regexes.
        expect(rankedTerms(`${t} \u2014`)).toEqual(want);
      }),
      { numRuns: 300 },
    );
  });

  it('counts the words of the regex definition (property)', () => {
    fc.assert(
      fc.property(ascii, (t) => {
        expect(proseCounts(t)).toEqual(proseCounts(`${t}\u2014`));
      }),
      { numRuns: 300 },
    );
  });
});

describe('proseCounts', () => {
  it('the counts of whole lines add up to the text’s (property)', () => {
    const line = fc
      .array(fc.constantFrom('the', 'of', 'x1', 'port', 'Ünï', '—', ' ', '\r', 'a'), {
        maxLength: 30,
      })
      .map((w) => `${w.join(' ')}\n`);
    fc.assert(
      fc.property(fc.array(line, { maxLength: 30 }), (lines) => {
        const sum = { words: 0, stop: 0 };
        for (const l of lines) {
          const c = proseCounts(l);
          sum.words += c.words;
          sum.stop += c.stop;
        }
        expect(sum).toEqual(proseCounts(lines.join('')));
        expect(proseShare(sum)).toBe(proseRatio(lines.join('')));
      }),
    );
  });
});

describe('rankedTerms: memory', () => {
  it('the caches and the key ids do not keep the texts their compounds came from alive', () => {
    // In a child with the collector exposed: 2,000 texts of 200 KB, each with its own compounds.
    // A cached slice of each text would keep about 400 MB alive.
    const module = fileURLToPath(new URL('../../dist/retrieval/ranked-terms.js', import.meta.url));
    const script = `
      const { rankedTerms } = await import(${JSON.stringify(module)});
      gc();
      const before = process.memoryUsage().heapUsed;
      for (let i = 0; i < 2000; i++) {
        rankedTerms(('path/to/module_' + i + '/file_name_' + i + '.ts ').padEnd(200000, 'x'));
      }
      gc();
      process.stdout.write(String(process.memoryUsage().heapUsed - before));`;
    const r = spawnSync(process.execPath, ['--expose-gc', '--input-type=module', '-e', script], {
      encoding: 'utf8',
    });
    expect(r.status, r.stderr).toBe(0);
    expect(Number(r.stdout)).toBeLessThan(50e6);
  });
});
