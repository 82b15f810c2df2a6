import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { tempDir } from '../test-utils/temp-dir.js';
import { findTornTail, quarantineTornTail } from './journal-tail.js';
import { storeLayout } from './layout.js';

function journal(bytes: string | Buffer) {
  const layout = storeLayout(tempDir().dir);
  writeFileSync(layout.journalPath, bytes);
  return layout;
}

describe('findTornTail', () => {
  it('a whole journal (or none, or an empty one) has no torn tail', () => {
    expect(findTornTail(journal('a\nb\n').journalPath)).toBeNull();
    expect(findTornTail(journal('').journalPath)).toBeNull();
    expect(findTornTail(join(tempDir().dir, 'absent'))).toBeNull();
  });

  it('finds the last newline however far back it lies (past several read chunks)', () => {
    const long = 'x'.repeat(200_000);
    expect(findTornTail(journal(`a\n${long}`).journalPath)).toEqual({ cut: 2, size: 200_002 });
    expect(findTornTail(journal(long).journalPath)).toEqual({ cut: 0, size: 200_000 });
    const at = 65_536 * 2;
    const exact = `${'y'.repeat(at - 1)}\n${'z'.repeat(10)}`;
    expect(findTornTail(journal(exact).journalPath)).toEqual({ cut: at, size: at + 10 });
  });
});

describe('quarantineTornTail', () => {
  it('moves the exact tail bytes (invalid UTF-8 included) and cuts the journal at its last line', () => {
    const tail = Buffer.from([0x7b, 0xff, 0x00, 0xc3]);
    const layout = journal(Buffer.concat([Buffer.from('line\n'), tail]));
    const to = quarantineTornTail(layout, findTornTail(layout.journalPath)!);
    expect(to).toBe(join(layout.dir, 'quarantine', 'recall_index.journal.torn-at-5'));
    expect(readFileSync(to)).toEqual(tail);
    expect(readFileSync(layout.journalPath, 'utf8')).toBe('line\n');
    // The same offset torn again later never overwrites the first one.
    writeFileSync(layout.journalPath, 'line\nagain');
    const second = quarantineTornTail(layout, findTornTail(layout.journalPath)!);
    expect(second).toBe(`${to}.1`);
    expect(readFileSync(to)).toEqual(tail);
    expect(readFileSync(second, 'utf8')).toBe('again');
  });

  it('removes a journal with no complete line', () => {
    const layout = journal('{"rec');
    quarantineTornTail(layout, findTornTail(layout.journalPath)!);
    expect(existsSync(layout.journalPath)).toBe(false);
  });
});
