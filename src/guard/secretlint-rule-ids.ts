/**
 * The rule ids `@secretlint/secretlint-rule-preset-recommend` ships: what a secrets table may
 * name. Written out rather than read from the preset, so that loading the guard tables (every
 * page-in) does not load secretlint itself; `secretlint-rule-ids.test.ts` checks the list against
 * the installed preset, so a dependency update that adds or removes a rule fails there.
 *
 * @example
 * SECRETLINT_RULE_IDS.includes('@secretlint/secretlint-rule-aws'); // true
 */
export const SECRETLINT_RULE_IDS: readonly string[] = [
  '@secretlint/secretlint-rule-1password',
  '@secretlint/secretlint-rule-anthropic',
  '@secretlint/secretlint-rule-aws',
  '@secretlint/secretlint-rule-basicauth',
  '@secretlint/secretlint-rule-database-connection-string',
  '@secretlint/secretlint-rule-filter-comments',
  '@secretlint/secretlint-rule-gcp',
  '@secretlint/secretlint-rule-github',
  '@secretlint/secretlint-rule-linear',
  '@secretlint/secretlint-rule-npm',
  '@secretlint/secretlint-rule-openai',
  '@secretlint/secretlint-rule-privatekey',
  '@secretlint/secretlint-rule-sendgrid',
  '@secretlint/secretlint-rule-shopify',
  '@secretlint/secretlint-rule-slack',
];
