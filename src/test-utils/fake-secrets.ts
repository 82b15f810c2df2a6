import { createHash } from 'node:crypto';

const UPPER_DIGITS = 'ABCDEFGHIJKLMNOPQRSTUVWXYZ234567';
const ALNUM = 'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789';
const B64 = `${ALNUM}+/`;
const DIGITS = '0123456789';

/** A deterministic string of `n` characters of `alphabet`, derived from `seed`. */
export function noise(seed: string, alphabet: string, n: number): string {
  let out = '';
  let block = createHash('sha256').update(seed).digest();
  while (out.length < n) {
    for (const b of block) {
      if (out.length === n) break;
      out += alphabet[b % alphabet.length];
    }
    block = createHash('sha256').update(block).digest();
  }
  return out;
}

/** Secrets of the acceptance turn, by name: format-valid, obviously fake, built at run time. */
export interface FakeSecrets {
  awsAccessKeyId: string;
  awsSecretAccessKey: string;
  githubToken: string;
  openaiProjectKey: string;
  slackToken: string;
  pemPrivateKey: string;
  postgresPassword: string;
}

/**
 * Fake secrets in every format the acceptance turn needs, assembled from pieces at run time so
 * that no source file of the repository holds a complete secret-shaped string. `salt` varies
 * them (a store folded twice with different salts holds different values).
 *
 * @example
 * const s = fakeSecrets(); s.githubToken.startsWith('ghp_'); // true
 */
export function fakeSecrets(salt = ''): FakeSecrets {
  const pemLines = [`MII${noise(`pem0${salt}`, B64, 61)}`];
  for (let i = 1; i < 8; i++) pemLines.push(noise(`pem${i}${salt}`, B64, 64));
  const pemKind = ['RSA', 'PRIVATE', 'KEY'].join(' ');
  return {
    awsAccessKeyId: ['AK', 'IA', noise(`aws-id${salt}`, UPPER_DIGITS, 16)].join(''),
    awsSecretAccessKey: noise(`aws-secret${salt}`, B64, 40),
    githubToken: ['gh', 'p_', noise(`github${salt}`, ALNUM, 36)].join(''),
    openaiProjectKey: ['sk', '-proj-', noise(`openai${salt}`, `${ALNUM}_-`, 156)].join(''),
    slackToken: [
      'xo',
      'xb-',
      noise(`slack1${salt}`, DIGITS, 12),
      '-',
      noise(`slack2${salt}`, DIGITS, 13),
      '-',
      noise(`slack3${salt}`, ALNUM, 24),
    ].join(''),
    pemPrivateKey: `-----BEGIN ${pemKind}-----\n${pemLines.join('\n')}\n-----END ${pemKind}-----`,
    postgresPassword: noise(`pg${salt}`, ALNUM, 20),
  };
}

/** A tool-output turn holding every fake secret, as an agent session would show them. */
export function secretTurn(s: FakeSecrets): string {
  return [
    '$ cat ~/.aws/credentials',
    '[default]',
    `aws_access_key_id = ${s.awsAccessKeyId}`,
    `aws_secret_access_key = ${s.awsSecretAccessKey}`,
    '$ cat .env',
    `GITHUB_TOKEN=${s.githubToken}`,
    `OPENAI_API_KEY=${s.openaiProjectKey}`,
    `SLACK_BOT_TOKEN=${s.slackToken}`,
    `DATABASE_URL=postgres://app:${s.postgresPassword}@db.internal:5432/billing`,
    '$ cat deploy/id_rsa',
    s.pemPrivateKey,
    '$ psql "$DATABASE_URL" -c "select 1"',
    ' ?column? ',
    '----------',
    '        1',
  ].join('\n');
}

/**
 * Every 12-character window of every secret value (PEM: of its key lines): none of them may
 * appear in anything written.
 */
export function secretFragments(s: FakeSecrets): string[] {
  const values = [
    s.awsAccessKeyId,
    s.awsSecretAccessKey,
    s.githubToken,
    s.openaiProjectKey,
    s.slackToken,
    s.postgresPassword,
    ...s.pemPrivateKey.split('\n').filter((l) => !l.startsWith('-----')),
  ];
  const out = new Set<string>();
  for (const v of values) {
    for (let i = 0; i + 12 <= v.length; i++) out.add(v.slice(i, i + 12));
  }
  return [...out];
}

/**
 * The fragments found in some bytes, case-insensitively (term lists and analysis keys are
 * lower-cased, so a leak there would not match the original case). Binary-safe.
 */
export function leakedFragments(bytes: Uint8Array, fragments: readonly string[]): string[] {
  const hay = Buffer.from(bytes).toString('latin1').toLowerCase();
  return fragments.filter((f) => hay.includes(f.toLowerCase()));
}
