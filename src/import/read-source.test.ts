import { constants } from 'node:buffer';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { gzipSync } from 'node:zlib';
import { describe, expect, it } from 'vitest';
import { tempDir } from '../test-utils/temp-dir.js';
import { MAX_SOURCE_BYTES, readSourceText } from './read-source.js';

describe('readSourceText', () => {
  it('reads gzip directly (by magic bytes, whatever the name) and drops a BOM', () => {
    const dir = tempDir().dir;
    const text = '{"a":"ü\\r\\n"}\n';
    writeFileSync(join(dir, 'a.jsonl.gz'), gzipSync(Buffer.from(`\uFEFF${text}`)));
    writeFileSync(join(dir, 'b.jsonl'), gzipSync(Buffer.from(text)));
    expect(readSourceText(join(dir, 'a.jsonl.gz'))).toBe(text);
    expect(readSourceText(join(dir, 'b.jsonl'))).toBe(text);
  });

  it('refuses a .gz that is not gzip, broken gzip, invalid UTF-8 and missing files', () => {
    const dir = tempDir().dir;
    writeFileSync(join(dir, 'x.gz'), 'plain');
    writeFileSync(join(dir, 'y.gz'), gzipSync(Buffer.from('hello')).subarray(0, 12));
    writeFileSync(join(dir, 'z.json'), Buffer.from([0x5b, 0xff, 0x5d]));
    expect(() => readSourceText(join(dir, 'x.gz'))).toThrow(
      /x\.gz: named \.gz but is not gzip data/,
    );
    expect(() => readSourceText(join(dir, 'y.gz'))).toThrow(/y\.gz: not a valid gzip file/);
    expect(() => readSourceText(join(dir, 'z.json'))).toThrow(/z\.json:1: not valid UTF-8 text/);
    // The line of the first bad byte is named (a Latin-1 "é" on line 3 of a turns file).
    const rows = ['{"step_id": 0, "role": "user", "content": "caf\u00e9"}', '{"step_id": 1}'];
    writeFileSync(
      join(dir, 'w.jsonl'),
      Buffer.concat([
        Buffer.from(`${rows.join('\n')}\n{"content": "caf`),
        Buffer.from([0xe9, 0x22, 0x7d, 0x0a]),
      ]),
    );
    expect(() => readSourceText(join(dir, 'w.jsonl'))).toThrow(
      /w\.jsonl:3: not valid UTF-8 text \(history files are read as UTF-8: convert this one first\)$/,
    );
    expect(() => readSourceText(join(dir, 'none.json'))).toThrow(/none\.json: no such file/);
    // Before: "cannot read (EISDIR)".
    expect(() => readSourceText(dir)).toThrow(/: a directory, not a history file$/);
  });

  it('a text too long for one string is too large, not "not valid UTF-8"', () => {
    const dir = tempDir().dir;
    // A gzipped history that unpacks to more characters than a JavaScript string holds: one
    // member of 1 MiB, repeated (gzip members concatenated unpack as one text).
    const file = join(dir, 'huge.jsonl.gz');
    const member = gzipSync(Buffer.alloc(1 << 20, 0x61));
    const count = Math.ceil(constants.MAX_STRING_LENGTH / (1 << 20)) + 1;
    writeFileSync(file, Buffer.concat(Array.from({ length: count }, () => member)));
    expect(() => readSourceText(file)).toThrow(
      /huge\.jsonl\.gz: too large: its text is longer than one import can read \(536,870,888 characters, about 512 MiB\); import a shorter history$/,
    );
  }, 60_000);

  it('a .gz that unpacks past the bound is too large, not "not a valid gzip file"', () => {
    // Before, zlib's "Cannot create a Buffer larger than …" (past 4 GiB unpacked) was reported
    // as a broken gzip file. A small bound stands in for the real one here.
    const dir = tempDir().dir;
    const text = 'x'.repeat(2000);
    writeFileSync(join(dir, 'big.jsonl.gz'), gzipSync(Buffer.from(text)));
    writeFileSync(join(dir, 'big.jsonl'), text);
    expect(() => readSourceText(join(dir, 'big.jsonl.gz'), 1000)).toThrow(
      /big\.jsonl\.gz: too large: it unpacks to more than 1,000 bytes, more text than one import can read \(536,870,888 characters, about 512 MiB\); import a shorter history$/,
    );
    expect(() => readSourceText(join(dir, 'big.jsonl'), 1000)).toThrow(
      /big\.jsonl: too large: it is more than 1,000 bytes, more text than one import can read/,
    );
    expect(readSourceText(join(dir, 'big.jsonl.gz'), 2000)).toBe(text);
    expect(readSourceText(join(dir, 'big.jsonl'), 2000)).toBe(text);
    expect(MAX_SOURCE_BYTES).toBe(3 * constants.MAX_STRING_LENGTH);
  });

  it('says what to do with a zstd-compressed file (a newer Codex rollout) instead of "not UTF-8"', () => {
    const dir = tempDir().dir;
    // A zstd frame: magic, then a frame header and a raw block holding "{}".
    const frame = Buffer.from([0x28, 0xb5, 0x2f, 0xfd, 0x20, 0x02, 0x11, 0x00, 0x00, 0x7b, 0x7d]);
    writeFileSync(join(dir, 'rollout.jsonl.zst'), frame);
    expect(() => readSourceText(join(dir, 'rollout.jsonl.zst'))).toThrow(
      /rollout\.jsonl\.zst: zstd-compressed: decompress it first \(zstd -d FILE\)/,
    );
  });
});
