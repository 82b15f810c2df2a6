import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { o200kTokenizer } from '../../extract/tokenizer.js';
import { modelCalls } from '../../harness/per-call.js';
import { syntheticSession } from '../../harness/synthetic.js';
import { runCliProcess } from '../../test-utils/cli.js';
import { describeShared, sharedPath } from '../../test-utils/shared.js';
import { tempDir } from '../../test-utils/temp-dir.js';

const tmp = tempDir();
afterAll(() => tmp.cleanup());
let n = 0;
const fresh = (): string => join(tmp.dir, `s${n++}`, '.contextfold');

/** A turns file in the ../shared/data format, built from the synthetic session. */
function turnsFile(turns: number): { file: string; userSteps: number[] } {
  const lines: string[] = [];
  const userSteps: number[] = [];
  let step = 0;
  const push = (role: string, content: string): void => {
    if (role === 'user') userSteps.push(step);
    lines.push(JSON.stringify({ step_id: step++, role, content }));
  };
  push('tool', 'session banner: tools loaded');
  syntheticSession({ turns }).forEach((t, i) => {
    push('user', i > 12 && i % 4 === 0 ? `${t.prompt} What did marker${i - 10} show?` : t.prompt);
    for (const m of t.response) push(m.role, m.content);
  });
  const file = join(tmp.dir, `turns${n++}.jsonl`);
  writeFileSync(file, `${lines.join('\n')}\n`);
  return { file, userSteps };
}

describe('contextfold session', () => {
  const { file, userSteps } = turnsFile(30);
  const dir = fresh();
  const r = runCliProcess([
    '--dir',
    dir,
    '--json',
    'session',
    file,
    '--budget',
    '3000',
    '--keep-recent',
    '3',
  ]);
  const lines = r.stdout
    .trim()
    .split('\n')
    .map((l) => JSON.parse(l));

  it('prints one JSON line per incoming prompt', () => {
    expect(r.code).toBe(0);
    expect(r.stderr).toBe('');
    expect(lines.map((l) => l.step_id)).toEqual(userSteps);
    for (const [i, l] of lines.entries()) {
      expect(Object.keys(l).sort()).toEqual(
        [
          'baseline_tokens',
          'evicted',
          'folded',
          'pack_tokens',
          'paged_in',
          'step_id',
          'turn',
          'warnings',
        ].sort(),
      );
      expect(l.turn).toBe(i);
      expect(l.pack_tokens).toBeLessThanOrEqual(3000);
      expect(l.evicted).toEqual(l.paged_in);
    }
    expect(lines.some((l) => l.folded.length > 0)).toBe(true);
    expect(lines.some((l) => l.paged_in.length > 0)).toBe(true);
  });

  it('pack --at STEP prints that pack as it would be sent, identical in tokens', () => {
    const line = lines.find((l) => l.paged_in.length > 0)!;
    const p = runCliProcess(['--dir', dir, 'pack', '--at', String(line.step_id)]);
    expect(p.code).toBe(0);
    expect(o200kTokenizer().count(p.stdout.slice(0, -1))).toBe(line.pack_tokens);
    expect(p.stdout).toContain(`<archived_record step_id="${line.paged_in[0]}"`);
    const j = JSON.parse(
      runCliProcess(['--dir', dir, '--json', 'pack', '--at', String(line.step_id)]).stdout,
    );
    expect(j).toMatchObject({ step_id: line.step_id, tokens: line.pack_tokens });
    expect(j.metadata.paged_in.map((x: { step_id: number }) => x.step_id)).toEqual(line.paged_in);
    const e = runCliProcess(['--dir', dir, 'pack', '--at', String(line.step_id), '--explain']);
    expect(e.stdout).toContain(
      `turn ${line.turn} · prompt at step ${line.step_id} · ${line.pack_tokens}/3000 tokens`,
    );
    // Reading packs wrote nothing.
    const events = readFileSync(join(dir, 'events.jsonl'), 'utf8');
    runCliProcess(['--dir', dir, 'pack']);
    expect(readFileSync(join(dir, 'events.jsonl'), 'utf8')).toBe(events);
  });

  it('pack --at a step that is no prompt fails with one line', () => {
    const p = runCliProcess(['--dir', dir, 'pack', '--at', '2']);
    expect(p.code).toBe(1);
    expect(p.stderr).toMatch(
      /^contextfold: UsageError: no turn of this session has its prompt at step 2; prompts are at steps 1, 5, /,
    );
    expect(p.stderr.trim().split('\n')).toHaveLength(1);
  });

  it('refuses to run the same turns again into the same store', () => {
    const again = runCliProcess(['--dir', dir, 'session', file]);
    expect(again.code).toBe(1);
    expect(again.stderr).toMatch(
      /the turns start at step 0 but the session in .* has \d+ message\(s\)/,
    );
  });
});

describe('contextfold session: bad input', () => {
  const write = (text: string): string => {
    const f = join(tmp.dir, `bad${n++}.jsonl`);
    writeFileSync(f, text);
    return f;
  };
  const good = JSON.stringify({ step_id: 0, role: 'user', content: 'hi' });
  const cases: [string, RegExp][] = [
    [`${good}\n{"step_id": 1, "role": "assistant", "content": "ok"\n`, /\.jsonl:2: not valid JSON/],
    [
      `${good}\n{"step_id": 1, "role": "robot", "content": "x"}\n`,
      /\.jsonl:2: expected \{step_id, role, content\}: role/,
    ],
    [
      `${good}\n{"step_id": 1, "role": "user"}\n`,
      /\.jsonl:2: expected \{step_id, role, content\}: content/,
    ],
    [
      `${good}\n{"step_id": 5, "role": "user", "content": "x"}\n`,
      /\.jsonl:2: "step_id" 5 is out of order: expected 1/,
    ],
    ['\n\n', /no turns/],
  ];
  for (const [text, re] of cases) {
    it(`names the problem: ${re.source}`, () => {
      const dir = fresh();
      const r = runCliProcess(['--dir', dir, 'session', write(text)]);
      expect(r.code).toBe(1);
      expect(r.stderr).toMatch(re);
      expect(r.stderr.trim().split('\n')).toHaveLength(1);
      expect(r.stdout).toBe('');
      expect(existsSync(dir)).toBe(false);
    });
  }

  it("reads '-' from standard input, naming it so in errors", () => {
    // The importers read '-' as stdin; a row error said "-:2: …".
    const dir = fresh();
    const ok = runCliProcess(['--dir', dir, 'session', '-'], { input: `${good}\n` });
    expect(ok.stderr).toBe('');
    expect(ok.code).toBe(0);
    const bad = runCliProcess(['--dir', fresh(), 'session', '-'], { input: `${good}\n{"x"` });
    expect(bad.stderr).toMatch(/^contextfold: UsageError: standard input:2: /);
  });

  it('rejects a missing file and a bad --budget before touching the store', () => {
    const dir = fresh();
    expect(runCliProcess(['--dir', dir, 'session', join(tmp.dir, 'nope.jsonl')]).stderr).toMatch(
      /nope\.jsonl: no such file/,
    );
    expect(
      runCliProcess(['--dir', dir, 'session', write(`${good}\n`), '--budget', 'lots']).stderr,
    ).toMatch(/--budget must be a positive integer \(1 or more\), got 'lots'/);
    for (const bad of ['0', '-5'])
      expect(
        runCliProcess(['--dir', dir, 'session', write(`${good}\n`), '--budget', bad]).stderr,
      ).toBe(
        `contextfold: UsageError: --budget must be a positive integer (1 or more), got '${bad}'\n`,
      );
    expect(existsSync(dir)).toBe(false);
  });
});

describeShared('contextfold session on a real transcript (../shared/data)', () => {
  it('replays the SWE-agent CTF session within budget', () => {
    const file = sharedPath('data', 'trajectories', 'SWE-agent_ctf_web_i_got_id_demo.jsonl');
    const users = readFileSync(file, 'utf8')
      .trim()
      .split('\n')
      .filter((l) => JSON.parse(l).role === 'user').length;
    const r = runCliProcess(['--dir', fresh(), '--json', 'session', file, '--budget', '6000']);
    expect(r.code).toBe(0);
    const lines = r.stdout
      .trim()
      .split('\n')
      .map((l) => JSON.parse(l));
    expect(lines).toHaveLength(users);
    for (const l of lines) expect(l.pack_tokens).toBeLessThanOrEqual(6000);
  });
});

describe('contextfold session --per-call', () => {
  it('builds a pack before every model call and sums what was sent against the history', () => {
    const { file } = turnsFile(20);
    const dir = fresh();
    const rows = readFileSync(file, 'utf8')
      .trim()
      .split('\n')
      .map((l) => JSON.parse(l) as { role: string });
    const r = runCliProcess([
      '--dir',
      dir,
      '--json',
      'session',
      file,
      '--per-call',
      '--budget',
      '3000',
    ]);
    expect(r.code).toBe(0);
    expect(r.stderr).toBe('');
    const lines = r.stdout
      .trim()
      .split('\n')
      .map((l) => JSON.parse(l));
    const total = lines.pop().total;
    expect(lines.map((l) => l.history_messages)).toEqual(modelCalls(rows));
    for (const l of lines) {
      expect(l.pack_tokens).toBeLessThanOrEqual(3000);
      expect(l.evicted).toEqual(l.paged_in);
    }
    // Tool-loop continuations page in too (their output names old turns).
    expect(
      lines.some(
        (l, i) => rows[l.history_messages - 1]!.role === 'tool' && l.paged_in.length > 0 && i > 0,
      ),
    ).toBe(true);
    expect(total).toMatchObject({
      calls: lines.length,
      sent_tokens: lines.reduce((n, l) => n + l.pack_tokens, 0),
      history_tokens: lines.reduce((n, l) => n + l.history_tokens, 0),
      over_budget_calls: 0,
    });
    expect(total.sent_ratio).toBeLessThan(0.6);
    const human = runCliProcess([
      '--dir',
      fresh(),
      'session',
      file,
      '--per-call',
      '--budget',
      '3000',
    ]);
    expect(human.stdout.trim().split('\n').at(-1)).toMatch(
      new RegExp(
        `^${lines.length} model call\\(s\\) over ${rows.length} message\\(s\\): sent \\d+ of \\d+ history tokens \\(\\d+\\.\\d%\\), largest pack \\d+/3000, 0 over budget`,
      ),
    );
  });
});
