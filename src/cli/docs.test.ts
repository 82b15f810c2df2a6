import { spawnSync } from 'node:child_process';
import { existsSync, mkdirSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { FAST_TMP } from '../conformance/test-utils/fixtures.js';
import { runDemo } from '../engine/demo-scenario.js';
import { IMPORT_FORMATS } from '../import/index.js';
import { type ErrorCode, exitCodeFor, ipcfErrorName } from '../protocol/errors.js';
import { extractSnippets } from '../test-utils/doc-snippets.js';
import { type InstalledCopy, installedCopy, REPO_ROOT } from '../test-utils/installed-copy.js';
import { PG_MISSING, PG_URL, pgStoreUrl } from '../test-utils/pg.js';
import { itShared } from '../test-utils/shared.js';
import { isCi } from '../test-utils/shared-location.js';
import { tempDir } from '../test-utils/temp-dir.js';

/** README.md and every docs/ page, in a stable order. */
const PAGES = [
  'README.md',
  ...readdirSync(join(REPO_ROOT, 'docs'))
    .filter((f) => f.endsWith('.md'))
    .sort()
    .map((f) => `docs/${f}`),
];

const read = (page: string) => readFileSync(join(REPO_ROOT, page), 'utf8');

// The blocks run against what a user installs: the packed package (npm pack), unpacked as an
// installed copy with `contextfold` on PATH.
const tmp = tempDir('cf-docs-');
let copy: InstalledCopy;
beforeAll(() => {
  copy = installedCopy(join(tmp.dir, 'prefix'));
});
const notRun: string[] = [];
afterAll(() => {
  tmp.cleanup();
  if (notRun.length > 0) {
    console.log(
      `${notRun.length} shell blocks in the docs are marked as not run by this test:\n${notRun.map((s) => `  ${s}`).join('\n')}`,
    );
  }
});

/**
 * Environment of a page's blocks beyond the usual: the team page's blocks talk to the run's
 * PostgreSQL server, as the store a reader sets in CONTEXTFOLD_STORE.
 */
const PAGE_ENV: Record<string, () => Record<string, string>> = {
  'docs/team.md': () => ({ CONTEXTFOLD_STORE: pgStoreUrl('docs') }),
};

/**
 * Pages whose blocks make their temporary directories in RAM: `contextfold conformance` runs
 * each of the corpus's cases (about a hundred) in a fresh temporary directory, folding with
 * fsync; on the disk that was about 40 s of waiting on fsync for 7 s of work, and over the
 * test's minute under load (the conformance suites run it with FAST_TMP too).
 */
const PAGE_TMPDIR: Record<string, string> = { 'docs/conformance.md': FAST_TMP };

/** How long a block may run: the test's limit is the child's, so a slow block reports its output. */
const BLOCK_TIMEOUT_MS = 120_000;

function run(
  script: string,
  cwd: string,
  extra: Record<string, string> = {},
): { code: number | null; out: string } {
  mkdirSync(cwd, { recursive: true });
  const r = spawnSync('bash', ['-euo', 'pipefail', '-c', script], {
    cwd,
    encoding: 'utf8',
    env: {
      ...process.env,
      ...extra,
      PATH: [copy.binDir, dirname(process.execPath), '/usr/local/bin', '/usr/bin', '/bin'].join(
        ':',
      ),
    },
    timeout: BLOCK_TIMEOUT_MS,
  });
  return { code: r.status, out: `${r.stdout}\n${r.stderr}`.trim().slice(-4000) };
}

const withBlocks = PAGES.filter((p) => extractSnippets(p, read(p)).length > 0);

describe.each(withBlocks)('every shell block of %s runs as written, in order', (page) => {
  // One working directory per page: a block sees what the blocks before it wrote.
  const cwd = join(tmp.dir, page.replace(/[^\w.-]+/g, '_'));
  const pageEnv = PAGE_ENV[page];
  if (pageEnv && !PG_URL) {
    // A page whose blocks need the PostgreSQL server: a failure under CI, a skip elsewhere.
    if (isCi()) it(`${page} needs its PostgreSQL server`, () => expect(PG_MISSING).toBe(''));
    else it.skip(`${page} [not run: ${PG_MISSING}]`, () => {});
    return;
  }
  const env = {
    ...pageEnv?.(),
    ...(PAGE_TMPDIR[page] ? { TMPDIR: PAGE_TMPDIR[page] } : {}),
  };
  for (const s of extractSnippets(page, read(page))) {
    const title = `${page}:${s.line}`;
    if (s.marker?.kind === 'skip') {
      notRun.push(`${title} (${s.marker.reason})`);
      it.skip(`${title} [not run: ${s.marker.reason}]`, () => {});
    } else if (s.marker?.kind === 'needs-shared') {
      itShared(title, () => expect(run(s.script, cwd)).toMatchObject({ code: 0 }));
    } else {
      it(
        title,
        () => {
          const r = run(s.script, cwd, env);
          expect(r.code, `${title} failed:\n${s.script}\n--- output ---\n${r.out}`).toBe(0);
        },
        BLOCK_TIMEOUT_MS + 10_000,
      );
    }
  }
});

describe('the README and docs', () => {
  it('the README fits on a few screens and starts with the two quick-start commands', () => {
    const readme = read('README.md');
    expect(readme.split('\n').length).toBeLessThanOrEqual(200);
    expect(readme).toContain('\nnpm ci && npm run demo');
    expect(readme).toContain('\nnpm ci && npm test');
  });

  it('links every docs page from the README, and every relative link resolves', () => {
    const readme = read('README.md');
    for (const page of PAGES.filter((p) => p.startsWith('docs/')))
      expect(readme, `README.md links ${page}`).toContain(`(${page}`);
    for (const page of PAGES) {
      for (const m of read(page).matchAll(/\]\(([^)#\s]+)(#[^)\s]*)?\)/g)) {
        const target = m[1]!;
        if (/^[a-z]+:/.test(target)) continue;
        const path = join(REPO_ROOT, dirname(page), target);
        expect(existsSync(path), `${page} links ${target}, which does not exist`).toBe(true);
      }
    }
  });

  it("the README's before/after table is what the demo measures", async () => {
    const r = await runDemo({ dir: join(tempDir().dir, '.contextfold') });
    const readme = read('README.md');
    expect(readme).toContain(`| ${r.raw_history_tokens.toLocaleString('en-US')} |`);
    for (const q of r.questions) {
      expect(readme).toContain(
        `| "${q.prompt}" | ${q.tokens_with_folding} (question ${q.prompt_tokens} + ${q.pages.length} `,
      );
    }
  });

  it('the session error the harness page quotes is the line the CLI prints', () => {
    // The page's turns.jsonl with its 7th line's step id made 9 (the case the page describes).
    const page = read('docs/harness.md');
    const quoted = /`(contextfold: UsageError: turns\.jsonl[^`]*)`/.exec(page)?.[1];
    const turns = /cat > turns\.jsonl <<'EOF'\n([\s\S]*?)\nEOF/.exec(page)?.[1]?.split('\n');
    expect(quoted && turns?.[6]).toContain('"step_id": 6');
    turns![6] = turns![6]!.replace('"step_id": 6', '"step_id": 9');
    const cwd = join(tmp.dir, 'harness-error');
    mkdirSync(cwd, { recursive: true });
    writeFileSync(join(cwd, 'turns.jsonl'), `${turns!.join('\n')}\n`);
    const r = run('contextfold --dir s/.contextfold session turns.jsonl', cwd);
    expect(r).toEqual({ code: 1, out: quoted!.replace(/\s+/g, ' ') });
    expect(existsSync(join(cwd, 's'))).toBe(false);
  });

  it("the CLI page's exit code table names every error's code, and the internal error's", () => {
    const rows = new Map(
      [...read('docs/cli.md').matchAll(/^\| (\d+) \| (.*) \|$/gm)].map((m) => [
        Number(m[1]),
        m[2]!,
      ]),
    );
    const codes: ErrorCode[] = [
      'NODE_NOT_FOUND',
      'INTEGRITY_CHECK',
      'PATH_CONTAINMENT',
      'ORPHANED_NODE',
      'BROKEN_REFERENCE',
      'USAGE',
      'STEP_CONFLICT',
      'LOCK_TIMEOUT',
      'STORE_NOT_FOUND',
      'STORE_UNAVAILABLE',
      'GUARD_TABLE',
    ];
    for (const code of codes.filter((c) => !['USAGE', 'STORE_NOT_FOUND'].includes(c)))
      expect(rows.get(exitCodeFor(code)), code).toContain(ipcfErrorName(code));
    expect(rows.get(70)).toMatch(/internal error/);
  });

  it("the library page's contextfold/import row names every import format", () => {
    const row = read('docs/library.md')
      .split('\n')
      .find((l) => l.startsWith('| `contextfold/import`'));
    const names: Record<string, string> = {
      'claude-code': 'Claude Code',
      codex: 'Codex CLI',
      openai: 'OpenAI',
      anthropic: 'Anthropic',
      aider: 'aider',
      'swe-agent': 'SWE-agent',
      turns: 'turns',
    };
    for (const f of IMPORT_FORMATS) expect(row, f).toContain(names[f] ?? f);
  });

  it('marks few blocks as not run, each with a reason', () => {
    const marked = PAGES.flatMap((p) => extractSnippets(p, read(p))).filter(
      (s) => s.marker?.kind === 'skip',
    );
    expect(marked.length).toBeLessThanOrEqual(6);
  });
});
