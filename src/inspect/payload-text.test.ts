import { describe, expect, it } from 'vitest';
import type { PayloadSegment } from './api-types.js';
import { payloadLines } from './payload-text.js';

const ALL = { maxLines: 1000, maxBytes: 1e9, maxSegments: 1e9 };
const view = (b: string | Uint8Array, o = ALL) =>
  payloadLines(typeof b === 'string' ? Buffer.from(b, 'utf8') : b, o);

/** Reassembles the bytes a line's segments stand for (text, hex; invisible characters by code). */
function bytesOf(segs: PayloadSegment[]): Buffer {
  return Buffer.concat(
    segs.map((s) => {
      if (s.kind === 'text') return Buffer.from(s.text, 'utf8');
      if (s.kind === 'hex') return Buffer.from(s.hex.split(' ').map((x) => Number.parseInt(x, 16)));
      return Buffer.from(String.fromCodePoint(Number.parseInt(s.code.slice(2), 16)), 'utf8');
    }),
  );
}

describe('payloadLines', () => {
  it('keeps text exact and numbers lines; a final newline ends the last line', () => {
    const v = view('alpha\n\tbeta  \n\ngamma\n');
    expect(v.valid_utf8).toBe(true);
    expect(v.total_lines).toBe(4);
    expect(v.lines).toEqual([
      [{ kind: 'text', text: 'alpha' }],
      [{ kind: 'text', text: '\tbeta  ' }],
      [],
      [{ kind: 'text', text: 'gamma' }],
    ]);
    expect(view('').lines).toEqual([[]]);
    expect(view('no newline').total_lines).toBe(1);
  });

  it('shows invalid UTF-8 and control bytes (NUL, CR) as hex, and says the payload is not UTF-8', () => {
    const bytes = Uint8Array.from([0x6f, 0x6b, 0x0d, 0x0a, 0x80, 0xff, 0x41, 0x00, 0xc3, 0x28]);
    const v = view(bytes);
    expect(v.valid_utf8).toBe(false);
    expect(v.lines).toEqual([
      [
        { kind: 'text', text: 'ok' },
        { kind: 'hex', hex: '0d' },
      ],
      [
        { kind: 'hex', hex: '80 ff' },
        { kind: 'text', text: 'A' },
        { kind: 'hex', hex: '00 c3' },
        { kind: 'text', text: '(' },
      ],
    ]);
    // Lossless: the segments stand for exactly the bytes of each line.
    expect(Buffer.concat([bytesOf(v.lines[0]!), Buffer.from('\n'), bytesOf(v.lines[1]!)])).toEqual(
      Buffer.from(bytes),
    );
  });

  it('rejects overlong, surrogate and out-of-range sequences; accepts astral characters', () => {
    for (const bad of [
      [0xc0, 0xaf],
      [0xe0, 0x80, 0xaf],
      [0xed, 0xa0, 0x80],
      [0xf4, 0x90, 0x80, 0x80],
      [0xe2, 0x82],
    ]) {
      const v = view(Uint8Array.from(bad));
      expect(v.valid_utf8).toBe(false);
      expect(v.lines[0]!.every((s) => s.kind === 'hex')).toBe(true);
    }
    expect(view('deploy 🚀 𝔘').lines).toEqual([[{ kind: 'text', text: 'deploy 🚀 𝔘' }]]);
  });

  it('marks invisible and reordering characters by code point', () => {
    const v = view('a\u200bb \u202eevil\u202c \u{e0041}');
    expect(v.lines[0]).toEqual([
      { kind: 'text', text: 'a' },
      { kind: 'invisible', code: 'U+200B' },
      { kind: 'text', text: 'b ' },
      { kind: 'invisible', code: 'U+202E' },
      { kind: 'text', text: 'evil' },
      { kind: 'invisible', code: 'U+202C' },
      { kind: 'text', text: ' ' },
      { kind: 'invisible', code: 'U+E0041' },
    ]);
    expect(bytesOf(v.lines[0]!).toString('utf8')).toBe('a\u200bb \u202eevil\u202c \u{e0041}');
  });

  it('stops at the line or byte limit but still counts every line', () => {
    const text = Array.from({ length: 50 }, (_, i) => `line ${i}`).join('\n');
    const v = view(text, { ...ALL, maxLines: 10 });
    expect(v.lines).toHaveLength(10);
    expect(v.total_lines).toBe(50);
    expect(v.truncated).toBe(true);
    const w = view(text, { ...ALL, maxBytes: 20 });
    expect(w.lines).toHaveLength(3); // the line that crosses 20 bytes is the last shown
    expect(w.truncated).toBe(true);
    expect(view(text).truncated).toBe(false);
    expect(view(text).shown_bytes).toBe(Buffer.byteLength(text));
  });

  it('cuts one long line at the byte limit, on a character boundary', () => {
    const v = view(`${'é'.repeat(10)}\nnext\n`, { ...ALL, maxBytes: 7 });
    expect(v.lines).toEqual([[{ kind: 'text', text: 'ééé' }]]);
    expect(v.shown_bytes).toBe(6);
    expect(v.total_lines).toBe(2);
    expect(v.truncated).toBe(true);
    // A 6 MB line is not sent whole.
    const huge = view('word '.repeat(1_200_000), { ...ALL, maxBytes: 1024 });
    expect(bytesOf(huge.lines[0]!).length).toBe(1024);
    expect(huge.truncated).toBe(true);
  });

  it('stops at the segment limit: text between invalid bytes cannot blow up the answer', () => {
    const bytes = Buffer.from('ab\xff'.repeat(100_000), 'latin1');
    const v = view(bytes, { ...ALL, maxSegments: 1000 });
    expect(v.lines).toHaveLength(1);
    expect(v.lines[0]).toHaveLength(1000);
    expect(v.shown_bytes).toBe(bytesOf(v.lines[0]!).length);
    expect(bytes.subarray(0, v.shown_bytes)).toEqual(bytesOf(v.lines[0]!));
    expect(v.truncated).toBe(true);
    const invisible = view('\u200b'.repeat(5000), { ...ALL, maxSegments: 10 });
    expect(invisible.lines[0]).toHaveLength(10);
    expect(invisible.shown_bytes).toBe(30);
  });
});
