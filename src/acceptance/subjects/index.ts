import type { AdapterSubject } from '../subject.js';
import { AiSdkSubject } from './ai-sdk-subject.js';
import type { ProcessSubjectOptions } from './cli-process.js';
import { HookSubject } from './hook-subject.js';
import { McpSubject } from './mcp-subject.js';
import { ProxySubject } from './proxy-subject.js';
import { SessionSubject } from './session-subject.js';

export { AiSdkSubject } from './ai-sdk-subject.js';
export { BIN_PATH, type ProcessSubjectOptions } from './cli-process.js';
export { HookSubject } from './hook-subject.js';
export { McpSubject } from './mcp-subject.js';
export type { Dialect } from './proxy-dialects.js';
export { ProxySubject } from './proxy-subject.js';
export { HARNESS_SETTINGS, SessionSubject } from './session-subject.js';

/**
 * One subject per integration, in the order the table prints them. `env` goes to the subjects
 * that run the CLI as a process.
 *
 * @example
 * defaultSubjects().map((s) => s.name);
 * // ['session', 'ai-sdk-middleware', 'mcp-server', 'claude-code-hook', 'proxy-anthropic', 'proxy-openai']
 */
export function defaultSubjects(options: ProcessSubjectOptions = {}): AdapterSubject[] {
  return [
    new SessionSubject(),
    new AiSdkSubject(),
    new McpSubject(options),
    new HookSubject(options),
    new ProxySubject('anthropic'),
    new ProxySubject('openai'),
  ];
}
