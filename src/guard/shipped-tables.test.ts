import { createHash } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import { SHIPPED_TABLES_SHA256 } from './shipped-tables.js';
import { guardTableSchemas } from './table-schema.js';
import { DEFAULT_GUARD_DIR, GUARD_TABLE_FILES } from './tables.js';

// The loader trusts exactly these bytes without a schema check: both halves of that trust are
// pinned here.
describe('the shipped guard tables', () => {
  const files = Object.values(GUARD_TABLE_FILES).sort();

  it('are the bytes SHIPPED_TABLES_SHA256 names (update it when a table changes)', () => {
    const actual = Object.fromEntries(
      files.map((f) => [
        f,
        createHash('sha256')
          .update(readFileSync(join(DEFAULT_GUARD_DIR, f)))
          .digest('hex'),
      ]),
    );
    expect(actual).toEqual(SHIPPED_TABLES_SHA256);
  });

  it('pass the table schema', () => {
    const { guardTableSchema } = guardTableSchemas(z);
    for (const f of files) {
      const parsed = guardTableSchema.safeParse(
        JSON.parse(readFileSync(join(DEFAULT_GUARD_DIR, f), 'utf8')),
      );
      expect(parsed.success ? 'valid' : parsed.error.issues[0], f).toBe('valid');
    }
  });
});
