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
    '021627174ce44cddeb0d5d517792dc33afc070eade47a2c2285183d279d2d3fb',
  'secrets/secret-patterns.json':
    'a42e28c1055bd3be90d8ab65864a2f68abb92f016d25c1252bc6cc92c0bea9b9',
  'signatures/active-content.json':
    'aa8e264581e41b181a464629848ea4d9e4e06c9d8a493a85d04135e511e1e3cb',
};
