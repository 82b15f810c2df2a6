/**
 * A one-line progress bar on stderr, shown only when stderr is a terminal (never in pipes,
 * CI logs or --json output).
 */
export function progressBar(label: string): {
  update(done: number, total: number): void;
  done(): void;
} {
  const tty = process.stderr.isTTY === true;
  let last = -1;
  return {
    update(done, total) {
      if (!tty || total === 0) return;
      const pct = Math.floor((done / total) * 100);
      if (pct === last) return;
      last = pct;
      const width = 30;
      const fill = Math.round((pct / 100) * width);
      process.stderr.write(
        `\r${label} [${'#'.repeat(fill)}${'-'.repeat(width - fill)}] ${pct}% (${done}/${total})`,
      );
    },
    done() {
      if (tty && last >= 0) process.stderr.write('\n');
    },
  };
}

/**
 * Progress of work in named passes (verifying, then writing): one bar per pass, each ended when
 * the next starts. `done()` ends the last.
 */
export function phasedProgress(labels: Readonly<Record<string, string>>): {
  update(done: number, total: number, phase: string): void;
  done(): void;
} {
  let current: { phase: string; bar: ReturnType<typeof progressBar> } | undefined;
  return {
    update(done, total, phase) {
      if (current?.phase !== phase) {
        current?.bar.done();
        current = { phase, bar: progressBar(labels[phase] ?? phase) };
      }
      current.bar.update(done, total);
    },
    done() {
      current?.bar.done();
    },
  };
}
