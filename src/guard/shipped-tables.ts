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
    '1d7e49aecc5474cf4e5e92293859f2fdb1de079c5ee517888f547df727e98b52',
  'signatures/active-content.json':
    'aa8e264581e41b181a464629848ea4d9e4e06c9d8a493a85d04135e511e1e3cb',
};
