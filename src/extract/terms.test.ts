import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { compareCodePoints, sortedUnique } from '../protocol/canonical-json.js';
import { foldToken, isStopword } from './fold-token.js';
import { FILE_RE, IDENTIFIER_RE } from './patterns.js';
import { extractTerms, identifiersOf, nodeTerms, queryTerms } from './terms.js';

const ids = (text: string) => extractTerms('', text).identifiers;
const files = (text: string) => extractTerms('', text).files;
const commands = (text: string) => extractTerms('', text).commands;
const errors = (text: string) => extractTerms('', text).errors;

describe('identifiers (Python \\w / \\b semantics)', () => {
  it('folds Turkish İ and ı so spellings meet', () => {
    expect(ids('İNCİ IŞIK ılık Veritabanı İstanbul')).toEqual(
      ['inci', 'istanbul', 'işik', 'ilik', 'veritabani'].sort(compareCodePoints),
    );
  });

  it('normalises NFD input to NFC before matching', () => {
    // 'e' + U+0301 is two code points; JS \p{L} would stop at the mark, NFC makes it one letter.
    expect(ids('e\u0301cole cafe\u0301')).toEqual(['caf\u00e9', '\u00e9cole']);
    expect(identifiersOf('e\u0301cole')).toEqual(identifiersOf('\u00e9cole'));
  });

  it('treats letters with diacritics as word characters (JS \\w would split naïve)', () => {
    expect(ids('naïve façade')).toEqual(['façade', 'naïve']);
  });

  it('splits at zero-width space, which is neither word nor whitespace', () => {
    expect(ids('token\u200bvalue')).toEqual(['token', 'value']);
    expect(ids('pаssword_reset')).toEqual(['pаssword_reset']); // Cyrillic а kept as is
  });

  it('uses Unicode decimal digits for [^\\W\\d] but ASCII [0-9] for numbers', () => {
    expect(ids('٣٤٥ abc١٢٣ 𝟙𝟚𝟛 ①②③ x²y³ Ⅻ')).toEqual(['abc١٢٣', 'x²y³', '①②③']);
    expect(ids('80 443 007 1234567 12ab 3d_model _3d v1.2.3')).toEqual([
      '007',
      '1234567',
      '443',
      '_3d',
    ]);
  });

  it('requires three code points, counting astral characters once', () => {
    expect(ids('ab 𝔘𝔫 𝔘𝔫𝔦')).toEqual(['𝔘𝔫𝔦']);
  });

  it('drops stopwords in folded and raw form', () => {
    expect(ids('The FOR with nasıl için Olan kept')).toEqual(['kept']);
    expect(ids('NASIL')).toEqual(['nasil']); // neither 'NASIL' nor its fold 'nasil' is listed
  });

  it('lowercases Greek with final sigma', () => {
    expect(ids('ΟΔΥΣΣΕΥΣ ΣΊΣΥΦΟΣ')).toEqual(['οδυσσευς', 'σίσυφος']);
  });

  it('extracts from summary + newline + payload', () => {
    expect(extractTerms('alpha', 'beta').identifiers).toEqual(['alpha', 'beta']);
    // The newline separates words that would otherwise join.
    expect(extractTerms('abc', 'def').identifiers).toEqual(['abc', 'def']);
  });
});

describe('files', () => {
  it('reproduces the bare-file quirk: no end check after the extension', () => {
    expect(files('edit package.json')).toEqual(['package.js']);
    expect(files('Panel.tsx mod.pyi')).toEqual(['Panel.ts', 'mod.py']);
    expect(files('a.b.c.json')).toEqual(['a.b.c.js']);
  });

  it('keeps the full name when a path separator precedes it', () => {
    expect(files('web/package.json')).toEqual(['web/package.json']);
    expect(files('./scripts/run.sh')).toEqual(['./scripts/run.sh']);
  });

  it('turns backslashes into slashes', () => {
    expect(files('C:\\Apps\\proj\\main.tf')).toEqual(['Apps/proj/main.tf']);
  });

  it('ignores unknown bare extensions and dotless text', () => {
    expect(files('config.env .env README')).toEqual([]);
    expect(files('QUJDREVGR0g/aWprbG1ub3BxcnN0dXZ3eHl6')).toEqual([]);
  });

  it('uses Python \\w, so non-ASCII names match whole', () => {
    expect(files('döküman/şema.sql')).toEqual(['döküman/şema.sql']);
  });
});

describe('commands', () => {
  it('matches $ and > prompts at line starts, stopping at ; and line ends', () => {
    expect(commands('$ npm test\n  $   cargo build --release; echo done\n> SELECT 1;')).toEqual([
      'SELECT 1',
      'cargo build --release',
      'npm test',
    ]);
  });

  it('lets \\s+ cross a newline (quirk)', () => {
    expect(commands('$ ls\nfile.txt')).toEqual(['ls\nfile.txt']);
  });

  it('stops at \\r but treats neither a lone \\r nor U+2028 as a line start', () => {
    expect(commands('$ ls -la\r\nok')).toEqual(['ls -la']);
    expect(commands('here $ echo hi\r$ echo there')).toEqual([]);
    expect(commands('$ git commit\u2028$ more')).toEqual(['git commit\u2028$ more']);
  });

  it('counts markdown quotes and lets leading whitespace span blank lines', () => {
    expect(commands('> quoted text')).toEqual(['quoted text']);
    expect(commands('\n\n   $ make')).toEqual(['make']);
    expect(commands('$\n$ pwd')).toEqual(['pwd']);
  });

  it('needs a command word right after the prompt', () => {
    expect(commands('$ !bang')).toEqual([]);
    expect(commands('price is $ 5')).toEqual([]);
  });
});

describe('errors', () => {
  it('finds the reference error shapes', () => {
    expect(
      errors(
        'Traceback x\nValueError: bad\nHTTP  404\nHTTP 503 x\nDB_CONN_TIMEOUT_ERROR\nFATAL PANIC\nMyException',
      ),
    ).toEqual([
      'DB_CONN_TIMEOUT_ERROR',
      'FATAL',
      'HTTP  404',
      'HTTP 503',
      'MyException',
      'PANIC',
      'Traceback',
      'ValueError',
    ]);
  });

  it('uses Python \\b: a letter like é is a word character', () => {
    expect(errors('éValueError ValueErrorü _ValueError xFATAL')).toEqual([]);
    expect(errors('(ValueError) FATAL.')).toEqual(['FATAL', 'ValueError']);
  });

  it('reads \\d in HTTP codes as any decimal digit, but [45] as ASCII', () => {
    expect(errors('HTTP 4٠٤')).toEqual(['HTTP 4٠٤']);
    expect(errors('HTTP ٤٠٤')).toEqual([]);
    expect(errors('HTTP\n500')).toEqual(['HTTP\n500']);
  });
});

describe('explicit lists', () => {
  it('replace the extracted lists and are returned as given', () => {
    const t = extractTerms('s', 'a.py $ ls FooError', {
      files: ['z.py', 'a.py', 'z.py'],
      commands: [],
      errors: ['B', 'A'],
    });
    expect(t.files).toEqual(['z.py', 'a.py', 'z.py']);
    expect(t.commands).toEqual([]);
    expect(t.errors).toEqual(['B', 'A']);
    expect(t.identifiers).toContain('fooerror');
  });
});

describe('query and node terms', () => {
  it('queryTerms = identifiers ∪ folded files ∪ folded errors, sorted unique', () => {
    expect(queryTerms('Fix ValueError in src/App.ts, HTTP 503?')).toEqual([
      '503',
      'app',
      'fix',
      'http',
      'http 503',
      'src',
      'src/app.ts',
      'valueerror',
    ]);
  });

  it('queryTerms of an NFD prompt equals that of the NFC prompt', () => {
    expect(queryTerms('Ре\u0301шение cafe\u0301')).toEqual(
      queryTerms('Ре́шение caf\u00e9'.normalize('NFC')),
    );
  });

  it('nodeTerms folds files and errors', () => {
    expect(
      nodeTerms({ identifiers: ['billing'], files: ['V12__Tenant.sql'], errors: ['FATAL', 'İO'] }),
    ).toEqual(['billing', 'fatal', 'io', 'v12__tenant.sql']);
  });
});

describe('properties', () => {
  const text = fc.string({ unit: 'grapheme-composite', maxLength: 80 });
  const mixed = fc.oneof(
    text,
    fc.string({ unit: 'binary', maxLength: 60 }),
    fc
      .array(
        fc.constantFrom(
          '$ ',
          '> ',
          '\n',
          '\r',
          ' ',
          'src/',
          'a.py',
          'İ',
          'ı',
          'HTTP 404',
          'Error',
          'FooError',
          '_x',
          '123',
          'é',
          'e\u0301',
          '\u200b',
          '\u2028',
          'the',
        ),
        { maxLength: 30 },
      )
      .map((a) => a.join('')),
  );

  it('extraction is deterministic and every extracted list is sorted unique', () => {
    fc.assert(
      fc.property(mixed, mixed, (s, p) => {
        const a = extractTerms(s, p);
        expect(extractTerms(s, p)).toEqual(a);
        for (const list of [a.identifiers, a.files, a.commands, a.errors]) {
          expect(list).toEqual(sortedUnique(list));
        }
      }),
    );
  });

  it('identifiers and files of joined texts are the union, whatever the order', () => {
    fc.assert(
      fc.property(mixed, mixed, (a, b) => {
        const ab = extractTerms(a, b);
        const ba = extractTerms(b, a);
        expect(ab.identifiers).toEqual(ba.identifiers);
        expect(ab.files).toEqual(ba.files);
        expect(ab.identifiers).toEqual(sortedUnique([...identifiersOf(a), ...identifiersOf(b)]));
      }),
    );
  });

  it('is invariant under NFC/NFD of the input', () => {
    fc.assert(
      fc.property(mixed, mixed, (s, p) => {
        expect(extractTerms(s.normalize('NFD'), p.normalize('NFD'))).toEqual(
          extractTerms(s.normalize('NFC'), p.normalize('NFC')),
        );
      }),
    );
  });

  it('nodeTerms does not depend on list order', () => {
    fc.assert(
      fc.property(fc.array(mixed, { maxLength: 6 }), fc.array(mixed, { maxLength: 6 }), (f, e) => {
        const a = nodeTerms({ identifiers: [], files: f, errors: e });
        const b = nodeTerms({ identifiers: [], files: [...f].reverse(), errors: [...e].reverse() });
        expect(a).toEqual(b);
      }),
    );
  });
});

describe('hand scanners equal the reference regexes', () => {
  // Plain regex implementations of the reference extraction, the definition the scanners in
  // terms.ts must reproduce.
  const regexIdentifiers = (text: string) =>
    sortedUnique(
      [...text.normalize('NFC').matchAll(IDENTIFIER_RE)]
        .filter((m) => !isStopword(m[0]))
        .map((m) => foldToken(m[0])),
    );
  const regexFiles = (text: string) =>
    sortedUnique([...text.normalize('NFC').matchAll(FILE_RE)].map((m) => m[0].replace(/\\/g, '/')));

  const alphabet = fc.constantFrom(
    'a',
    'Z',
    'x',
    '_',
    '0',
    '7',
    '٣',
    '²',
    'Ⅻ',
    'é',
    'e\u0301',
    'İ',
    'ı',
    '𝔘',
    '𝟙',
    '\u{1F680}',
    '\u200b',
    '.',
    '/',
    '\\',
    '-',
    ' ',
    '\n',
    '\r',
    '\u2028',
    'py',
    'json',
    'ts',
    '$',
    '\uD800',
    '\uDC00',
    'The',
    'for',
    '.md',
    'src/',
    '123',
    '4567',
  );
  const texts = fc.array(alphabet, { maxLength: 40 }).map((a) => a.join(''));

  it('identifiers', () => {
    fc.assert(
      fc.property(texts, (t) => {
        expect(identifiersOf(t)).toEqual(regexIdentifiers(t));
      }),
      { numRuns: 2000 },
    );
  });

  it('files', () => {
    fc.assert(
      fc.property(texts, (t) => {
        expect(extractTerms(t, '').files).toEqual(regexFiles(`${t}\n`));
      }),
      { numRuns: 2000 },
    );
  });

  it('agree on arbitrary Unicode strings too', () => {
    fc.assert(
      fc.property(fc.string({ unit: 'binary', maxLength: 60 }), (t) => {
        expect(identifiersOf(t)).toEqual(regexIdentifiers(t));
        expect(extractTerms(t, '').files).toEqual(regexFiles(`${t}\n`));
      }),
      { numRuns: 1000 },
    );
  });

  it('handles long dotless runs without quadratic blow-up', () => {
    const blob = 'QUJD'.repeat(50_000); // 200 KB of base64-like text, no dot
    expect(extractTerms('', `${blob}\nsee a/b.py`).files).toEqual(['a/b.py']);
  });
});

describe('documented examples', () => {
  it('extractTerms', () => {
    expect(extractTerms('Deps', '$ npm install\nedited package.json')).toEqual({
      identifiers: ['deps', 'edited', 'install', 'json', 'npm', 'package'],
      files: ['package.js'],
      commands: ['npm install'],
      errors: [],
    });
    expect(identifiersOf('PostgreSQL on Port 5433')).toEqual(['5433', 'port', 'postgresql']);
    expect(queryTerms('Which port does PostgreSQL use?')).toEqual([
      'does',
      'port',
      'postgresql',
      'use',
    ]);
  });
});
