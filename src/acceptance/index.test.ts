import { describe, expect, it } from 'vitest';

describe('contextfold/acceptance (the package entry point, built)', () => {
  it('exposes the runner, the subjects and the declaration', async () => {
    const m = await import('contextfold/acceptance');
    expect(typeof m.runAdapterAcceptance).toBe('function');
    expect(m.defaultSubjects().map((s) => s.name)).toEqual([
      'session',
      'ai-sdk-middleware',
      'mcp-server',
      'claude-code-hook',
      'proxy-anthropic',
      'proxy-openai',
    ]);
    expect(typeof m.buildAdapterDeclaration).toBe('function');
    expect(m.loadCaseFile().file.cases.length).toBeGreaterThanOrEqual(30);
  });
});
