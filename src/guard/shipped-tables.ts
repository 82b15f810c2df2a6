/**
 * SHA-256 of the table files shipped under `guard/`, by path. `shipped-tables.test.ts` checks
 * that these are the shipped bytes and that those bytes pass the table schema, so a loader
 * given exactly these bytes needs no schema check (nor the schema library) at run time; any
 * other bytes, an edited copy or another directory's tables, are checked in full. Editing a
 * shipped table means updating its hash here (the test prints the new one).
 *
 * @example
 * SHIPPED_TABLES_SHA256['lexicon/injection-lexicon.json']?.length; // 64
 */
export const SHIPPED_TABLES_SHA256: Readonly<Record<string, string>> = {
  'lexicon/injection-lexicon.json':
    '76a612d87b4d0357d01bf7fc3ef9c2e4191c383e56225bffa261ffb618ce05f5',
  'secrets/secret-patterns.json':
    '6e2957029957c942c6c023e66c4864ad7c83df8ad224fe582763824ef6ecb63d',
  'signatures/active-content.json':
    'aa8e264581e41b181a464629848ea4d9e4e06c9d8a493a85d04135e511e1e3cb',
};
