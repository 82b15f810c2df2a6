import * as fs from 'node:fs';
import { describe, expect, it } from 'vitest';
import { canonicalJson, sha256Hex } from '../protocol/canonical-json.js';
import { isUsageError } from '../protocol/errors.js';
import { DEFAULT_POLICY, type HydrationPolicy, policyHash } from '../protocol/policy.js';
import { describeShared, sharedPath } from '../test-utils/shared.js';
import { project } from './projection.js';

const VECTORS = sharedPath('vectors', 'projection.jsonl');

interface VectorCase {
  step_id: number;
  summary: string;
  raw_content: string;
  files?: string[];
  commands?: string[];
  errors?: string[];
  policy?: HydrationPolicy;
  expect: {
    identifiers: string[];
    files: string[];
    commands: string[];
    errors: string[];
    normalized_content: string;
    payload_sha256: string;
    projection_sha256: string;
    folding_policy_hash: string;
    token_estimate: number;
  };
}

const haveVectors = fs.existsSync(VECTORS);

const cases: VectorCase[] = haveVectors
  ? fs
      .readFileSync(VECTORS, 'utf8')
      .split('\n')
      .filter((l) => l.trim() !== '')
      .map((l) => JSON.parse(l) as VectorCase)
  : [];

describeShared('reference projection vectors (projection.jsonl)', () => {
  it('has all 220 cases', () => {
    expect(cases).toHaveLength(220);
  });

  it.each(cases.map((c, i) => [i + 1, c.step_id, c] as const))(
    'line %i (step %i) matches the reference exactly',
    (_line, _step, c) => {
      const p = project({
        stepId: c.step_id,
        summary: c.summary,
        payload: c.raw_content,
        files: c.files,
        commands: c.commands,
        errors: c.errors,
        policy: c.policy ?? DEFAULT_POLICY,
      });
      expect({
        identifiers: p.identifiers,
        files: p.files,
        commands: p.commands,
        errors: p.errors,
        normalized_content: p.normalized_content,
        payload_sha256: p.payload_sha256,
        projection_sha256: p.projection_sha256,
        folding_policy_hash: p.folding_policy_hash,
        token_estimate: p.token_estimate,
      }).toEqual(c.expect);
    },
  );
});

const base = { stepId: 7, summary: 'Summary', policy: DEFAULT_POLICY };

describe('project', () => {
  it('hashes exactly the eight projection keys (recomputed by hand)', () => {
    const p = project({ ...base, payload: '$ ls src\nValueError in app.py  \n' });
    const expected = sha256Hex(
      canonicalJson({
        projection_version: 'ipcf-projection-v2',
        step_id: 7,
        normalized_content: '$ ls src\nValueError in app.py',
        identifiers: p.identifiers,
        files: ['app.py'],
        commands: ['ls src'],
        errors: ['ValueError'],
        folding_policy_hash: policyHash(DEFAULT_POLICY),
      }),
    );
    expect(p.projection_sha256).toBe(expected);
    expect(p.identifiers).toEqual(['app', 'src', 'summary', 'valueerror']);
  });

  it('depends on the step id and the policy', () => {
    const a = project({ ...base, payload: 'x' });
    const b = project({ ...base, stepId: 8, payload: 'x' });
    const c = project({
      ...base,
      payload: 'x',
      policy: { ...DEFAULT_POLICY, max_rehydration_tokens_per_call: 10 },
    });
    expect(new Set([a.projection_sha256, b.projection_sha256, c.projection_sha256]).size).toBe(3);
    expect(a.payload_sha256).toBe(b.payload_sha256);
    expect(c.folding_policy_hash).not.toBe(a.folding_policy_hash);
  });

  it('uses the summary as payload when the payload is empty (string or bytes)', () => {
    const s = project({ ...base, payload: '' });
    const b = project({ ...base, payload: new Uint8Array() });
    expect(s.payloadText).toBe('Summary');
    expect(s.payload_sha256).toBe(sha256Hex('Summary'));
    expect(b.payload_sha256).toBe(s.payload_sha256);
    expect(b.projection_sha256).toBe(s.projection_sha256);
  });

  it('hashes the raw payload bytes but normalises NFD to NFC for normalized_content', () => {
    const nfd = 'cafe\u0301  \n';
    const p = project({ ...base, payload: nfd });
    expect(p.payload_sha256).toBe(sha256Hex(Buffer.from(nfd, 'utf8')));
    expect(p.normalized_content).toBe('caf\u00e9');
    expect(p.identifiers).toContain('caf\u00e9');
    // token_estimate counts the raw payload's code points (8 // 4), not the NFC form's (7 // 4).
    expect(p.token_estimate).toBe(2);
  });

  it('treats valid UTF-8 bytes exactly like the same string, BOM included', () => {
    const text = '\uFEFF$ make\r\nok \u{1F680}';
    const s = project({ ...base, payload: text });
    const b = project({ ...base, payload: new TextEncoder().encode(text) });
    expect(b.encoding).toBe('utf8');
    expect(b.payloadText).toBe(text);
    expect(b.payload_sha256).toBe(s.payload_sha256);
    expect(b.projection_sha256).toBe(s.projection_sha256);
    // U+FEFF is not Python whitespace: a trailing BOM survives rstrip.
    expect(project({ ...base, payload: 'x\uFEFF' }).normalized_content).toBe('x\uFEFF');
  });

  it('folds invalid UTF-8: hash over the original bytes, lossy text, encoding base64', () => {
    const bytes = Uint8Array.from([0x24, 0x20, 0x6c, 0x73, 0x0a, 0xff, 0xfe, 0x41, 0xc3]);
    const p = project({ ...base, payload: bytes });
    expect(p.encoding).toBe('base64');
    expect(p.payload_sha256).toBe(sha256Hex(bytes));
    expect(p.payloadText).toBe('$ ls\n\uFFFD\uFFFDA\uFFFD');
    expect(p.normalized_content).toBe('$ ls\n\uFFFD\uFFFDA\uFFFD');
    // The command pattern's `\s+` crosses the newline (a v2 quirk), so the lossy text shows.
    expect(p.commands).toEqual(['ls\n\uFFFD\uFFFDA\uFFFD']);
    expect([...p.payloadBytes]).toEqual([...bytes]);
  });

  it('keeps its own copy of the payload bytes', () => {
    const bytes = new TextEncoder().encode('hello');
    const p = project({ ...base, payload: bytes });
    bytes[0] = 0x4a;
    expect(new TextDecoder().decode(p.payloadBytes)).toBe('hello');
    expect(p.payload_sha256).toBe(sha256Hex('hello'));
  });

  it('rejects a string payload with a lone surrogate, asking for bytes', () => {
    let err: unknown;
    try {
      project({ ...base, payload: 'ok \uD83D broken' });
    } catch (e) {
      err = e;
    }
    expect(isUsageError(err)).toBe(true);
    expect((err as Error).message).toMatch(/lone surrogate.*Uint8Array/);
  });

  it('rejects lone surrogates in the summary and explicit lists, and bad step ids', () => {
    expect(() => project({ ...base, summary: '\uDC00', payload: 'x' })).toThrow(/summary/);
    expect(() => project({ ...base, payload: 'x', files: ['a\uD800.py'] })).toThrow(/files/);
    expect(() => project({ ...base, stepId: 1.5, payload: 'x' })).toThrow(/step id/);
    expect(() => project({ ...base, stepId: -1, payload: 'x' })).toThrow(/step id/);
    expect(() => project({ ...base, payload: 'x', errors: [3] as unknown as string[] })).toThrow(
      /list of strings/,
    );
  });

  it('returns explicit lists as given but hashes them sorted and deduplicated', () => {
    const given = { files: ['z.py', 'a.py', 'z.py'], commands: ['ls', 'ls'], errors: [] };
    const p = project({ ...base, payload: 'text mentions b.py and $ pwd and FooError', ...given });
    expect(p.files).toEqual(['z.py', 'a.py', 'z.py']);
    expect(p.commands).toEqual(['ls', 'ls']);
    expect(p.errors).toEqual([]);
    const sorted = project({
      ...base,
      payload: 'text mentions b.py and $ pwd and FooError',
      files: ['a.py', 'z.py'],
      commands: ['ls'],
      errors: [],
    });
    expect(sorted.projection_sha256).toBe(p.projection_sha256);
    // An explicit list is a copy: mutating the input later cannot change the result.
    given.files.push('q.py');
    expect(p.files).toHaveLength(3);
  });
});

const STORE = `${sharedPath('vectors', 'reference-store', '.contextfold', 'cold_nodes')}/`;
const storeNodes = fs.existsSync(STORE)
  ? fs.readdirSync(STORE).filter((f) => f.endsWith('.json'))
  : [];

describeShared('cold nodes written by the reference engine', () => {
  it.each(storeNodes)('%s re-projects to its stored fields', (f) => {
    const node = JSON.parse(fs.readFileSync(`${STORE}${f}`, 'utf8')) as Record<string, unknown>;
    const p = project({
      stepId: node.step_id as number,
      summary: node.summary as string,
      payload: node.raw_content as string,
      policy: DEFAULT_POLICY,
    });
    expect({
      normalized_content: p.normalized_content,
      payload_sha256: p.payload_sha256,
      projection_sha256: p.projection_sha256,
      identifiers: p.identifiers,
      files: p.files,
      commands: p.commands,
      errors: p.errors,
      token_estimate: p.token_estimate,
    }).toEqual({
      normalized_content: node.normalized_content,
      payload_sha256: node.payload_sha256,
      projection_sha256: node.projection_sha256,
      identifiers: node.identifiers,
      files: node.files,
      commands: node.commands,
      errors: node.errors,
      token_estimate: node.token_estimate,
    });
  });
});
