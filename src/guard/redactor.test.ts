import { isUtf8 } from 'node:buffer';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { sha256Hex } from '../protocol/canonical-json.js';
import { fakeSecrets, noise, secretFragments, secretTurn } from '../test-utils/fake-secrets.js';
import { loadCorpusManifest } from './corpus.js';
import { Redactor } from './redactor.js';
import { DEFAULT_GUARD_DIR, loadGuardTables } from './tables.js';

const s = fakeSecrets();
const ALNUM = 'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789';
const redactor = new Redactor();
const unfiltered = new Redactor({ prefilter: false });

describe('Redactor.redactText', () => {
  it('replaces each secret of the acceptance turn by its typed marker', async () => {
    const r = await redactor.redactText(secretTurn(s));
    for (const f of secretFragments(s)) expect(r.text).not.toContain(f);
    expect(r.text).toContain('aws_access_key_id = [REDACTED:aws-access-key-id]');
    expect(r.text).toContain('aws_secret_access_key = [REDACTED:aws-secret-access-key]');
    expect(r.text).toContain('GITHUB_TOKEN=[REDACTED:github-token]');
    expect(r.text).toContain('OPENAI_API_KEY=[REDACTED:openai-api-key]');
    expect(r.text).toContain('SLACK_BOT_TOKEN=[REDACTED:slack-token]');
    expect(r.text).toContain('postgres://app:[REDACTED:url-password]@db.internal:5432/billing');
    expect(r.text).toContain('$ cat deploy/id_rsa\n[REDACTED:pem-private-key]\n$ psql');
    expect(r.redactions.map((x) => x.pattern_id)).toEqual([
      'secret:aws-access-key-id',
      'secret:aws-secret-access-key',
      'secret:github-token',
      'secret:openai-api-key',
      'secret:slack-token',
      'secret:url-password',
      'secret:pem-private-key',
    ]);
  });

  it('records byte offsets of each marker in the output and the SHA-256 of the removed value', async () => {
    const text = `é ${s.githubToken} ü ${s.awsAccessKeyId}`;
    const r = await redactor.redactText(text);
    const out = Buffer.from(r.text, 'utf8');
    expect(r.redactions).toHaveLength(2);
    const [gh, aws] = r.redactions;
    expect(out.subarray(gh!.start, gh!.end).toString()).toBe('[REDACTED:github-token]');
    expect(out.subarray(aws!.start, aws!.end).toString()).toBe('[REDACTED:aws-access-key-id]');
    expect(gh!.removed_sha256).toBe(sha256Hex(s.githubToken));
    expect(aws!.removed_sha256).toBe(sha256Hex(s.awsAccessKeyId));
    expect(JSON.stringify(r.redactions)).not.toContain(s.githubToken.slice(4, 16));
  });

  it('merges overlapping matches into one marker and names the others', async () => {
    const r = await redactor.redactText(`GITHUB_TOKEN=${s.githubToken}`);
    expect(r.text).toBe('GITHUB_TOKEN=[REDACTED:github-token]');
    expect(r.redactions).toEqual([
      expect.objectContaining({
        pattern_id: 'secret:github-token',
        merged_pattern_ids: ['secret:env-assignment'],
      }),
    ]);
  });

  it('removes literal values of lower- and mixed-case credential keys in config and code syntax', async () => {
    const v = `${s.postgresPassword}-x1`;
    const forms = [
      `password=${v}`,
      `  db_password: ${v}`,
      `spring.datasource.password=${v}`,
      `{"apiKey": "${v}"}`,
      `{\\"client_secret\\": \\"${v}\\"}`,
      `awsSecretAccessKey = '${v}'`,
      `Password: "${v}",`,
      `GET /feed?access_token=${v}&page=2`,
      `auth.credentials = ${v}`,
      `deploy --api-key=${v} --region eu`,
      `gh-login --token=${v}`,
      'X-Auth-Token: ' + v,
    ];
    for (const form of forms) {
      const r = await redactor.redactText(form);
      expect(r.text, form).not.toContain(v);
      expect(r.text, form).toContain('[REDACTED:config-assignment]');
      expect(r.redactions.map((x) => x.pattern_id)).toEqual(['secret:config-assignment']);
    }
  });

  it('removes values of the short pass, pwd and pw keys and of a --pass flag, not their look-alikes', async () => {
    const v = `${s.postgresPassword}-x1`;
    const forms = [
      `pass=${v}`,
      `smtp.pass=${v}`,
      `{"user": "app", "pwd": "${v}"}`,
      `db:\n  pw: ${v}`,
      `dbPass = '${v}'`,
      `{\\"pass\\": \\"${v}\\"}`,
      `curl --key k.pem --pass '${v}' https://api.example.com`,
      `tool --pass=${v}`,
      `DB_PASS=${v}`,
      `export SMTP_PW="${v}"`,
    ];
    for (const form of forms) expect((await redactor.redactText(form)).text, form).not.toContain(v);
    const benign = [
      '$ pwd\n/home/dev/app',
      'cd "$PWD/build" && pwd',
      '{"pwd": "/home/dev/app", "pass": true}',
      'pwd: C:/Users/dev/app',
      'All 12 tests pass: pass=12 fail=0',
      'x264 --pass 1 --bitrate 1000 && x264 --pass 2 --bitrate 1000',
      'proxy --pass-through --passthrough=1 --bypass=0x7ff0-0001',
      'except KeyError: pass',
      // biome-ignore lint/suspicious/noTemplateCurlyInString: a shell reference, not a template
      'pass: "${DB_PASS}"',
      'BYPASS=enabled-for-all',
      // biome-ignore lint/suspicious/noTemplateCurlyInString: a shell reference, not a template
      'DB_PASS=${DB_PASS:-}',
      `openssl pkcs12 -export -passout pass:${v}`,
    ];
    for (const t of benign) {
      const ids = (await redactor.redactText(t)).redactions.map((r) => r.pattern_id);
      expect(ids, t).toEqual(t.startsWith('openssl') ? ['secret:cli-password-flag'] : []);
    }
  });

  it('keeps credential-named keys whose values are names, lookups, types, numbers, paths or templates', async () => {
    const kept = [
      'api_key: anthropic_api_key',
      'secret: db-credentials',
      "const token = localStorage.getItem('token')",
      'private_key: Optional[str] = None',
      'password: correcthorsebatterystaple',
      'max_tokens: 40960000',
      'input_token: 12345678',
      'password_file: /run/secrets/db_password',
      'apiKey: process.env.OPENWEATHER_API_KEY,',
      "password: '{{ vault_db_password }}'",
      ['clientSecret: $', '{CLIENT_SECRET}'].join(''),
      'password: ********',
      'token: <your-token-here>',
      'password=[REDACTED:config-assignment]',
    ];
    for (const text of kept) {
      expect((await redactor.redactText(text)).redactions, text).toEqual([]);
    }
  });

  it('removes a credential value whole, however long (a session token is longer than 256)', async () => {
    // Before, a value stopped at 256 characters, later at 4,096, and the rest was stored.
    for (const n of [40, 300]) {
      const long = `FakeSessionToken${'AbCdEfGh0123456789'.repeat(n)}`;
      const cases: [string, string][] = [
        [`export AWS_SESSION_TOKEN=${long}`, 'export AWS_SESSION_TOKEN=[REDACTED:env-assignment]'],
        [`AWS_SESSION_TOKEN="${long}"`, 'AWS_SESSION_TOKEN="[REDACTED:env-assignment]"'],
        [`session_token = "${long}"`, 'session_token = "[REDACTED:config-assignment]"'],
        [`session_token: ${long}`, 'session_token: [REDACTED:config-assignment]'],
        [`Authorization: Bearer ${long}`, 'Authorization: Bearer [REDACTED:authorization-header]'],
        [`psql postgres://app:${long}@db/x`, 'psql postgres://app:[REDACTED:url-password]@db/x'],
        [`mysql --password ${long} -h db`, 'mysql --password [REDACTED:cli-password-flag] -h db'],
        [`curl -u app:${long} https://x`, 'curl -u app:[REDACTED:cli-user-password] https://x'],
      ];
      for (const [text, stored] of cases)
        expect((await redactor.redactText(text)).text).toBe(stored);
    }
  });

  it('reads the lines of a file inside JSON-escaped text (a .env a tool call wrote, as stored)', async () => {
    // Before, only the first line's value went: the others follow an escape, not a line start.
    const input = JSON.stringify({
      file_path: '/app/.env',
      content:
        'APP_ENV=production\nDB_PASSWORD=Fake-Env-File-Pass-7\n\tJWT_SECRET=fake-jwt-secret-0192\nAPI_TOKEN: fake-yaml-token-0193\n',
    });
    const r = await redactor.redactText(input);
    for (const v of ['Fake-Env-File-Pass-7', 'fake-jwt-secret-0192', 'fake-yaml-token-0193']) {
      expect(r.text).not.toContain(v);
    }
    expect(r.text).toContain('APP_ENV=production');
    expect(JSON.parse(r.text)).toMatchObject({ file_path: '/app/.env' });
    // A .netrc shown the same way: both passwords go, the escaped line breaks stay (valid JSON).
    const netrc = JSON.stringify({
      content:
        'machine a.example login u password Fake-Netrc-Pass-42\nmachine b.example login v password Fake-Netrc-Pass-43\n',
    });
    const n = await redactor.redactText(netrc);
    expect(JSON.parse(n.text)).toEqual({
      content:
        'machine a.example login u password [REDACTED:netrc-password]\nmachine b.example login v password [REDACTED:netrc-password]\n',
    });
  });

  it('removes Anthropic OAuth and admin tokens, which secretlint does not know', async () => {
    const tail = 'FAKEq8Xv2mJ9kLp3Rz7Tn4Wb6Yc1Hd5Gf0Se8Ua2Oi3Pl7Kj9Mh4Ng6Bv1Cx5Zq-FAKEtokenAA';
    for (const kind of ['oat01', 'ort01', 'admin01']) {
      const r = await redactor.redactText(`token: sk-ant-${kind}-${tail} (new)`);
      expect(r.text).toBe('token: [REDACTED:anthropic-oauth-token] (new)');
    }
  });

  it('removes every GitLab token of the token overview, never prefixes in prose or placeholders', async () => {
    const n = (k: number) => noise('gitlab', ALNUM, k);
    const tokens = [
      `glpat-${n(20)}`,
      `glpat-${n(27)}.01${noise('r', 'abcdefghijklmnopqrstuvwxyz0123456789', 7)}`,
      `glrt-t1_${n(27)}.0w${noise('s', 'abcdefghijklmnopqrstuvwxyz0123456789', 7)}`,
      `glrt-${n(20)}`,
      `gldt-${n(20)}`,
      `glft-${n(20)}`,
      `glsoat-${n(20)}`,
      `glffct-${n(20)}`,
      `glimt-${n(25)}`,
      `glagent-${n(50)}`,
      `gloas-${n(64)}`,
      `glptt-${noise('ptt', '0123456789abcdef', 40)}`,
      `glcbt-64_${n(20)}`,
      `GR1348941${n(20)}`,
    ];
    for (const t of tokens) {
      expect((await redactor.redactText(`got ${t} here`)).text, t).toBe(
        'got [REDACTED:gitlab-token] here',
      );
    }
    const prose = [
      'GitLab prefixes: glpat- (personal), gldt- (deploy), glptt- (pipeline trigger).',
      'label it gldt-tokens-for-the-registry-mirror',
      `placeholder glpat-${'x'.repeat(20)} or glpat-XXXXXXXXXXX-XXXXXXXX`,
      `glptt-${'x'.repeat(40)}`,
    ];
    for (const t of prose) expect((await redactor.redactText(t)).redactions, t).toEqual([]);
  });

  it('removes a Slack app-level token to its end (secretlint stops before its secret)', async () => {
    const token = `xapp-1-A0${noise('app', 'ABCDEFGHIJ0123456789', 9)}-${noise('n', '0123456789', 13)}-${noise('x', '0123456789abcdef', 64)}`;
    const r = await redactor.redactText(`SLACK_APP_TOKEN=${token}\nconnecting with ${token} now`);
    expect(r.text).toBe(
      'SLACK_APP_TOKEN=[REDACTED:slack-app-token]\nconnecting with [REDACTED:slack-app-token] now',
    );
    expect(r.redactions[1]).toMatchObject({
      pattern_id: 'secret:slack-app-token',
      merged_pattern_ids: ['secret:slack-token'],
    });
  });

  it('removes a credential written as a YAML block scalar: the lines indented under the key', async () => {
    const v = `${s.postgresPassword}-x1`;
    for (const nl of ['\n', '\r\n']) {
      for (const style of ['|', '>-', '|2+']) {
        const text = [
          'db:',
          `  password: ${style}`,
          `    ${v}`,
          '',
          `    ${v}-2`,
          '  user: app',
        ].join(nl);
        const r = await redactor.redactText(text);
        expect(r.text, style).toBe(
          [
            'db:',
            `  password: ${style}`,
            '    [REDACTED:yaml-block-credential]',
            '  user: app',
          ].join(nl),
        );
      }
    }
    const kept = [
      // biome-ignore lint/suspicious/noTemplateCurlyInString: a shell reference, not a template
      'db:\n  password: |\n    ${DB_PASSWORD}\n  user: app',
      'db:\n  secret: |\n  user: app',
      'job:\n  script: |\n    echo "token: set"\n  description: >\n    the token: | pipe',
    ];
    for (const t of kept) expect((await redactor.redactText(t)).redactions, t).toEqual([]);
  });

  it('removes a YAML block scalar under a list item (- password: |), lines deeper than the key', async () => {
    // Before, the rule wanted the key to open its line and the block was stored as given.
    const r = await redactor.redactText(
      'users:\n  - password: |\n      Zq8#mK2!vR7pL0x\n    role: admin\n- password: |\n  user: app',
    );
    expect(r.text).toBe(
      'users:\n  - password: |\n      [REDACTED:yaml-block-credential]\n    role: admin\n- password: |\n  user: app',
    );
  });

  it('removes a cookie value over 4,096 characters whole', async () => {
    // Before, the value's length was capped at 4,096 and a longer one was not found at all.
    const value = noise('cookie', ALNUM, 5000);
    const r = await redactor.redactText(`Cookie: theme=dark; session=${value}; lang=en`);
    expect(r.text).toBe('Cookie: theme=dark; session=[REDACTED:cookie-value]; lang=en');
  });

  it('removes Slack rotating tokens (xoxe.xoxp-1-, xoxe-1-) whole; placeholders and prefixes stay', async () => {
    // Before, no rule found them: secretlint's slack rule caps the last segment at 40 characters.
    const access = `xoxe.xoxp-1-${noise('acc', ALNUM, 166)}`;
    const refresh = `xoxe-1-${noise('ref', ALNUM, 146)}`;
    const r = await redactor.redactText(`{"token":"${access}","refresh_token":"${refresh}"}`);
    expect(r.text).toBe(
      '{"token":"[REDACTED:slack-rotating-token]","refresh_token":"[REDACTED:slack-rotating-token]"}',
    );
    for (const t of [
      'xoxe-1-xxxxxxxxxxxxxxxxxxxxxxxxxxxxxx',
      'a token starting xoxe.xoxp-1-…',
      'xoxe-1-short',
    ]) {
      expect((await redactor.redactText(t)).redactions, t).toEqual([]);
    }
  });

  it('removes a quoted value whole, with the punctuation password rules ask for: no fragment stays', async () => {
    // Before, the value stopped at the first & $ ( ; | and the rest of the password was stored.
    const cases: [string, string][] = [
      ['DB_PASSWORD="Tr0ub4dor&3xyz"', 'DB_PASSWORD="[REDACTED:env-assignment]"'],
      ['PASSPHRASE="correct horse battery staple"', 'PASSPHRASE="[REDACTED:env-assignment]"'],
      ["export API_TOKEN='a1b2c3d4$e5f6g7h8'", "export API_TOKEN='[REDACTED:env-assignment]'"],
      ["{ password: 'Tr0ub4dor&3xyz' }", "{ password: '[REDACTED:config-assignment]' }"],
      ['{"password": "pa55(word)[x]{y}"}', '{"password": "[REDACTED:config-assignment]"}'],
      ["mysql -u root -p'S3cret&Pass!' db", "mysql -u root -p'[REDACTED:cli-password-flag]' db"],
      [
        'Cookie: sid=s%3Aab12cd34ef56gh78; theme=dark',
        'Cookie: sid=[REDACTED:cookie-value]; theme=dark',
      ],
      ['db:5432:billing:app:Xk9v&Pq2:mL\\:r7', 'db:5432:billing:app:Xk9v&Pq2:mL\\:r7'],
      ['db:5432:billing:app:Xk9v&Pq2mL\\:r7', 'db:5432:billing:app:[REDACTED:pgpass-password]'],
    ];
    for (const [text, stored] of cases) expect((await redactor.redactText(text)).text).toBe(stored);
    // References and templates in quotes stay: they are not values.
    for (const text of [
      // biome-ignore lint/suspicious/noTemplateCurlyInString: a shell reference, written as text
      'password: "${DB_PASSWORD}"',
      'api_key = "$(cat ~/.key)"',
      '"token": "<token>"',
    ]) {
      expect((await redactor.redactText(text)).redactions, text).toEqual([]);
    }
  });

  it('removes the credential of an Authorization header, with or without its scheme, never a reference', async () => {
    const v = `${s.postgresPassword}0x`;
    for (const [text, kept] of [
      [`curl -H 'Authorization: Bearer ${v}' https://api.example.com`, 'Bearer '],
      [`> Authorization: Basic ${Buffer.from(`app:${v}`).toString('base64')}`, 'Basic '],
      [`{"authorization": "${v}"}`, '{"authorization": "'],
    ] as const) {
      const r = await redactor.redactText(text);
      expect(r.text, text).toContain(`${kept}[REDACTED:authorization-header]`);
      expect(r.redactions.map((x) => x.pattern_id)).toEqual(['secret:authorization-header']);
    }
    for (const text of [
      'curl -H "Authorization: Bearer $GITHUB_TOKEN"',
      'Authorization: Bearer YOUR_ACCESS_TOKEN',
      "-H 'Authorization: Bearer <token>'",
      'Authorization: Bearer sk-...a1b2',
    ]) {
      expect((await redactor.redactText(text)).redactions, text).toEqual([]);
    }
  });

  it('leaves all upper-case names to secret:env-assignment (one rule per value, no merge)', async () => {
    const r = await redactor.redactText(`DB_PASSWORD=${s.postgresPassword}-x1`);
    expect(r.redactions).toEqual([
      expect.not.objectContaining({ merged_pattern_ids: expect.anything() }),
    ]);
    expect(r.redactions[0]!.pattern_id).toBe('secret:env-assignment');
  });

  it('a secretlint-disable comment does not switch redaction off', async () => {
    const text = `// secretlint-disable\ntoken ${s.githubToken}\n// secretlint-enable`;
    expect((await redactor.redactText(text)).text).toContain('token [REDACTED:github-token]');
  });

  it('keeps offsets right after a leading BOM (secretlint drops it internally)', async () => {
    const r = await redactor.redactText(`\uFEFF${s.slackToken} x`);
    expect(r.text).toBe('\uFEFF[REDACTED:slack-token] x');
    expect(r.redactions[0]!.start).toBe(3);
  });

  it('returns a string with a lone surrogate unchanged (it cannot be stored; the engine refuses it)', async () => {
    const text = `${s.githubToken} \uD800`;
    expect(await redactor.redactText(text)).toEqual({ text, redactions: [] });
  });

  const fragment = fc.constantFrom(
    s.githubToken,
    s.slackToken,
    s.awsAccessKeyId,
    `aws_secret_access_key=${s.awsSecretAccessKey}`,
    s.openaiProjectKey,
    s.pemPrivateKey,
    `postgres://u:${s.postgresPassword}@h/db`,
    'DB_PASSWORD=hunter2hunter2',
    'PRIVATE KEY',
    'ghp_',
    'xoxb-',
    'AKIA',
    'sk-',
    '[REDACTED:github-token]',
    '://a:b@',
    ' ',
    '\n',
    '\r\n',
    'é',
    '😀',
    '=',
    '"',
    'TOKEN',
    'eyJ',
    `eyJ${'h'.repeat(10)}.eyJ${'p'.repeat(10)}.${'s'.repeat(16)}`,
    '_authToken=abc',
    `AIza${'A'.repeat(35)}`,
    `sk_live_${'a'.repeat(16)}`,
    `SK${'ab'.repeat(16)}`,
    'curl -u user:pass ',
    '--password hunter2 ',
    'mysql -pX ',
    'aws_secret_access_key=',
    'API_KEY=',
    `github_pat_${'a1'.repeat(41)}`,
    `hooks.slack.com/services/T0/B0/${'x'.repeat(8)}`,
    `xapp-1-${'A'.repeat(10)}`,
  );
  const texts = fc
    .array(fc.oneof(fragment, fc.string({ maxLength: 6 })), { maxLength: 12 })
    .map((a) => a.join(''));

  it('is deterministic and idempotent: redacting the output again changes nothing', async () => {
    await fc.assert(
      fc.asyncProperty(texts, async (text) => {
        const a = await redactor.redactText(text);
        const b = await redactor.redactText(text);
        expect(b).toEqual(a);
        const again = await redactor.redactText(a.text);
        expect(again.text).toBe(a.text);
        expect(again.redactions).toEqual([]);
      }),
      { numRuns: 150 },
    );
  });

  it('the prefilter never changes the result (triggers are necessary conditions)', async () => {
    await fc.assert(
      fc.asyncProperty(texts, async (text) => {
        expect(await redactor.redactText(text)).toEqual(await unfiltered.redactText(text));
      }),
      { numRuns: 150 },
    );
  });
});

describe('Redactor.redactTexts (a batch)', () => {
  it('removes a value found in one text wherever the batch repeats it, and only there', async () => {
    const pw = s.postgresPassword;
    const [cmd, out, other] = await redactor.redactTexts([
      `psql postgres://app:${pw}@db/x`,
      `warning: password ${pw} is in the history`,
      'unrelated text',
    ]);
    expect(cmd!.text).toBe('psql postgres://app:[REDACTED:url-password]@db/x');
    expect(out!.text).toBe('warning: password [REDACTED:repeated-value] is in the history');
    expect(out!.redactions.map((r) => r.pattern_id)).toEqual(['secret:repeated-value']);
    expect(other!.redactions).toEqual([]);
    // Alone, the bare value has no shape to be found by: the batch is what carries it.
    expect((await redactor.redactText(`warning: password ${pw}`)).redactions).toEqual([]);
    // Idempotent, and a letters-only password does not erase the word elsewhere.
    const again = await redactor.redactTexts([cmd!.text, out!.text]);
    expect(again.map((r) => r.text)).toEqual([cmd!.text, out!.text]);
    const [u, w] = await redactor.redactTexts([
      'postgres://app:postgres@db/x',
      'createdb -U postgres',
    ]);
    expect([u!.text, w!.text]).toEqual([
      'postgres://app:[REDACTED:url-password]@db/x',
      'createdb -U postgres',
    ]);
  });
});

describe('the prefilter on every corpus input', () => {
  it('gives the same result as running every matcher (each pattern has a positive case)', async () => {
    const dir = join(DEFAULT_GUARD_DIR, 'conformance');
    for (const id of loadCorpusManifest().cases) {
      const text = readFileSync(join(dir, id, 'input.txt'), 'utf8');
      expect(await redactor.redactText(text), id).toEqual(await unfiltered.redactText(text));
    }
  });
});

describe('Redactor.redactBytes', () => {
  it('redacts well-formed UTF-8 as text', async () => {
    const r = await redactor.redactBytes(Buffer.from(`a ${s.githubToken}`));
    expect(Buffer.from(r.bytes).toString()).toBe('a [REDACTED:github-token]');
  });

  it('redacts only inside the valid runs of non-UTF-8 bytes; every other byte passes exactly', async () => {
    const bytes = Buffer.concat([
      Buffer.from([0xff, 0x00, 0xc3]),
      Buffer.from(` k=${s.githubToken}\r\n`),
      Buffer.from([0x80, 0xfe]),
      Buffer.from(`${s.slackToken}`),
    ]);
    const r = await redactor.redactBytes(bytes);
    const out = Buffer.from(r.bytes);
    expect(isUtf8(out)).toBe(false);
    expect(out.subarray(0, 3)).toEqual(Buffer.from([0xff, 0x00, 0xc3]));
    const mid = ' k=[REDACTED:github-token]\r\n';
    expect(out.subarray(3, 3 + mid.length).toString('latin1')).toBe(mid);
    expect(out.subarray(3 + mid.length, 5 + mid.length)).toEqual(Buffer.from([0x80, 0xfe]));
    expect(out.subarray(5 + mid.length).toString()).toBe('[REDACTED:slack-token]');
    for (const x of r.redactions) {
      expect(out.subarray(x.start, x.end).toString()).toMatch(/^\[REDACTED:[a-z-]+\]$/);
    }
    expect(r.redactions.map((x) => x.pattern_id)).toEqual([
      'secret:github-token',
      'secret:slack-token',
    ]);
  });

  it('returns the very same bytes when nothing is found', async () => {
    const bytes = Buffer.from([0xff, 0x41, 0x42]);
    expect((await redactor.redactBytes(bytes)).bytes).toBe(bytes);
  });

  it('redacts UTF-16 with a byte-order mark as text, in the same byte order, offsets in the output', async () => {
    const text = `PS> $env:GITHUB_TOKEN = "${s.githubToken}"\r\né 😀 ${s.slackToken}\r\n`;
    const le = (t: string) => Buffer.from(t, 'utf16le');
    const be = (t: string) => Buffer.from(t, 'utf16le').swap16();
    for (const [bom, enc] of [
      [Buffer.of(0xff, 0xfe), le],
      [Buffer.of(0xfe, 0xff), be],
    ] as const) {
      const r = await redactor.redactBytes(Buffer.concat([bom, enc(text)]));
      const out = Buffer.from(r.bytes);
      const want = text
        .replace(s.githubToken, '[REDACTED:github-token]')
        .replace(s.slackToken, '[REDACTED:slack-token]');
      expect(out).toEqual(Buffer.concat([bom, enc(want)]));
      expect(r.redactions.map((x) => x.pattern_id)).toEqual([
        'secret:github-token',
        'secret:slack-token',
      ]);
      for (const x of r.redactions) {
        const marker =
          enc === le
            ? out.subarray(x.start, x.end)
            : Buffer.from(out.subarray(x.start, x.end)).swap16();
        expect(marker.toString('utf16le')).toMatch(/^\[REDACTED:[a-z-]+\]$/);
      }
    }
  });

  it('keeps UTF-16 bytes with nothing found, an odd length or a lone surrogate exactly as given', async () => {
    const clean = Buffer.concat([
      Buffer.of(0xff, 0xfe),
      Buffer.from('PS> Get-Location\r\n', 'utf16le'),
    ]);
    expect((await redactor.redactBytes(clean)).bytes).toBe(clean);
    const lone = Buffer.concat([clean, Buffer.of(0x00, 0xd8)]);
    expect((await redactor.redactBytes(lone)).bytes).toBe(lone);
    const odd = Buffer.concat([
      Buffer.of(0xff, 0xfe),
      Buffer.from(`k=${s.githubToken}`, 'utf16le'),
      Buffer.of(0x41),
    ]);
    expect((await redactor.redactBytes(odd)).bytes).toBe(odd);
  });
});

describe('Redactor.redactFields', () => {
  it('redacts payload, summary and explicit lists, recording the field of each marker', async () => {
    const r = await redactor.redactFields({
      summary: `pushed with ${s.githubToken}`,
      content: `url postgres://a:${s.postgresPassword}@h/db`,
      commands: ['ls', `curl -H "Authorization: Bearer ${s.slackToken}"`],
      files: ['a.ts'],
    });
    expect(r.fields.summary).toBe('pushed with [REDACTED:github-token]');
    expect(r.fields.content).toBe('url postgres://a:[REDACTED:url-password]@h/db');
    expect(r.fields.commands).toEqual([
      'ls',
      'curl -H "Authorization: Bearer [REDACTED:slack-token]"',
    ]);
    expect(r.fields.files).toEqual(['a.ts']);
    expect(r.records.map((x) => [x.field, x.pattern_id])).toEqual([
      ['raw_content', 'secret:url-password'],
      ['summary', 'secret:github-token'],
      ['commands[1]', 'secret:slack-token'],
    ]);
  });

  it('passes fields of the wrong type through for the engine to refuse', async () => {
    const r = await redactor.redactFields({ summary: 42 as unknown as string, content: undefined });
    expect(r.fields.summary).toBe(42);
    expect(r.records).toEqual([]);
  });
});

describe('tables are a parameter', () => {
  it('a redactor without a pattern does not find what only it finds', async () => {
    const t = loadGuardTables();
    const without = new Redactor({
      tables: { ...t, patterns: t.patterns.filter((p) => p.id !== 'secret:jwt') },
    });
    const jwt = `eyJ${'a'.repeat(10)}.eyJ${'b'.repeat(10)}.${'c'.repeat(20)}`;
    expect((await redactor.redactText(jwt)).text).toBe('[REDACTED:jwt]');
    expect((await without.redactText(jwt)).text).toBe(jwt);
  });
});
