import type { Reporter, TestModule, Vitest } from 'vitest/node';
import { NEEDS_SHARED } from './shared-location.js';

/**
 * Lists, once at the end of a run, the suites that did not run because the shared data
 * (`../shared`) is absent, and how to run them. Each such suite registered one skipped test
 * titled with {@link NEEDS_SHARED} (see `describeShared` in shared.ts).
 */
export default class SharedDataReporter implements Reporter {
  private vitest: Vitest | null = null;

  onInit(vitest: Vitest): void {
    this.vitest = vitest;
  }

  onTestRunEnd(testModules: ReadonlyArray<TestModule>): void {
    const suites: string[] = [];
    for (const m of testModules) {
      for (const t of m.children.allTests()) {
        if (t.result().state !== 'skipped' || !t.name.startsWith(NEEDS_SHARED)) continue;
        suites.push(`${m.relativeModuleId}: ${t.name.slice(NEEDS_SHARED.length).trim()}`);
      }
    }
    if (suites.length === 0) return;
    const lines = [
      '',
      `${suites.length} suites or tests need ../shared (the reference vectors and real sessions) and did not run:`,
      ...suites.sort().map((s) => `  ${s}`),
      'Run them: clone the shared data beside the repository as ../shared, or set CONTEXTFOLD_SHARED=path. Under CI=true a missing ../shared fails the run.',
      '',
    ];
    const log = this.vitest?.logger;
    if (log) log.log(lines.join('\n'));
    else console.log(lines.join('\n'));
  }
}
