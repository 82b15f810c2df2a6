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
    '29eb836335c99464e5ce03e8ea39906b64433ad51f83468572c3ac2862000bef',
  'secrets/secret-patterns.json':
    '1fda043d99056db4d50c5ceb613d6a9b1b3d6c0400854199295fe86817719047',
  'signatures/active-content.json':
    '01de0227392edbfc6add318fcdf1443fc066457f70e8e7eaebfff5ad8d2f0f12',
};
