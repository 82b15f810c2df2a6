import { rules } from '@secretlint/secretlint-rule-preset-recommend';
import { describe, expect, it } from 'vitest';
import { compareCodePoints } from '../protocol/canonical-json.js';
import { SECRETLINT_RULE_IDS } from './secretlint-rule-ids.js';

describe('SECRETLINT_RULE_IDS', () => {
  it('is exactly the rule ids of the installed preset, sorted', () => {
    const shipped = rules.map((r) => r.meta.id).sort(compareCodePoints);
    expect(SECRETLINT_RULE_IDS).toEqual(shipped);
  });
});
