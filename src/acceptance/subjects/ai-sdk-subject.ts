import { join } from 'node:path';
import type { LanguageModelV3Prompt } from '@ai-sdk/provider';
import type { ModelMessage } from 'ai';
import { AI_SDK_ACCEPTANCE } from '../../adapters/ai-sdk/acceptance.js';
import {
  type ContextFoldMiddleware,
  contextFoldMiddleware,
} from '../../adapters/ai-sdk/middleware.js';
import { outputText } from '../../adapters/ai-sdk/prompt-messages.js';
import type { Message } from '../../harness/messages.js';
import type { HistoryTurn } from '../case-schema.js';
import { toMessages } from '../history.js';
import type {
  AdapterSubject,
  CallObservation,
  SubjectCase,
  SubjectCaseOptions,
} from '../subject.js';
import { MODEL_REPLY, WARMUP_PROMPT } from '../subject.js';
import { optionalPeer } from './optional-peer.js';
import { HARNESS_SETTINGS } from './session-subject.js';

type AiModule = typeof import('ai');
type AiTestModule = typeof import('ai/test');

/** One harness message as the AI SDK message an application writes for it. */
function modelMessage(m: Message): ModelMessage {
  if (m.role === 'tool') {
    const value = m.content;
    const output = m.isError
      ? { type: 'error-text' as const, value }
      : { type: 'text' as const, value };
    return {
      role: 'tool',
      content: [{ type: 'tool-result', toolCallId: m.toolCallId!, toolName: m.toolName!, output }],
    };
  }
  if (m.role === 'assistant' && m.toolCalls) {
    const content = m.toolCalls.map((c) => ({
      type: 'tool-call' as const,
      toolCallId: c.id,
      toolName: c.name,
      input: c.input,
    }));
    return { role: 'assistant', content };
  }
  return { role: m.role, content: m.content };
}

/**
 * A case history as the AI SDK messages an application passes to `generateText`: the same
 * messages as {@link toMessages}, in the AI SDK's shape.
 */
export function toModelMessages(history: readonly HistoryTurn[]): ModelMessage[] {
  return toMessages(history).map(modelMessage);
}

/** Everything a prompt holds as text: system text, text parts, tool inputs and outputs. */
export function promptText(prompt: LanguageModelV3Prompt): string {
  const parts: string[] = [];
  for (const m of prompt) {
    if (m.role === 'system') {
      parts.push(m.content);
      continue;
    }
    for (const p of m.content) {
      if (p.type === 'text') parts.push(p.text);
      else if (p.type === 'tool-call') parts.push(JSON.stringify(p.input));
      else if (p.type === 'tool-result') parts.push(outputText(p.output));
    }
  }
  return parts.join('\n');
}

const message = (e: unknown) => (e instanceof Error ? e.message : String(e)).split('\n')[0]!;

class AiSdkCase implements SubjectCase {
  private readonly mw: ContextFoldMiddleware;
  private readonly mock: InstanceType<AiTestModule['MockLanguageModelV3']>;
  private readonly model: ReturnType<AiModule['wrapLanguageModel']>;
  private readonly messages = new Map<string, ModelMessage[]>();
  readonly writeRoots: readonly string[];

  constructor(
    private readonly o: SubjectCaseOptions,
    private readonly ai: AiModule,
    test: AiTestModule,
  ) {
    this.writeRoots = [join(o.workDir, 'ai-sdk'), join(o.workDir, 'cache')];
    this.mw = contextFoldMiddleware({
      ...HARNESS_SETTINGS,
      dir: join(o.workDir, 'ai-sdk'),
      cacheDir: join(o.workDir, 'cache'),
    });
    this.mock = new test.MockLanguageModelV3({
      doGenerate: async () => ({
        content: [{ type: 'text', text: MODEL_REPLY }],
        finishReason: { unified: 'stop', raw: 'stop' },
        usage: {
          inputTokens: { total: 1, noCache: 1, cacheRead: undefined, cacheWrite: undefined },
          outputTokens: { total: 1, text: 1, reasoning: undefined },
        },
        warnings: [],
      }),
    });
    this.model = ai.wrapLanguageModel({ model: this.mock, middleware: this.mw });
  }

  storeDir(session: string): string {
    return join(this.o.workDir, 'ai-sdk', 'sessions', session);
  }

  async setup(): Promise<CallObservation[]> {
    const out: CallObservation[] = [];
    for (const [name, s] of Object.entries(this.o.input.sessions)) {
      this.messages.set(name, toModelMessages(s.history));
      out.push(await this.call(name, WARMUP_PROMPT));
    }
    return out;
  }

  async call(session: string, prompt: string): Promise<CallObservation> {
    const history = this.messages.get(session)!;
    const messages: ModelMessage[] = [...history, { role: 'user', content: prompt }];
    const before = this.mock.doGenerateCalls.length;
    try {
      const r = await this.ai.generateText({
        model: this.model,
        messages,
        providerOptions: { contextfold: { sessionId: session } },
      });
      this.messages.set(session, [...messages, ...r.response.messages]);
    } catch (e) {
      return { proceeded: false, modelInput: '', refused: [], error: message(e) };
    }
    const sent = this.mock.doGenerateCalls[before];
    if (!sent)
      return { proceeded: false, modelInput: '', refused: [], error: 'the model was not called' };
    const pack = this.mw.lastPack(session);
    return {
      proceeded: true,
      modelInput: promptText(sent.prompt),
      refused: (pack?.metadata.page_failures ?? []).map((f) => ({
        step_id: f.step_id,
        error: f.error,
      })),
    };
  }

  close(): Promise<void> {
    return this.mw.close();
  }
}

/**
 * The AI SDK middleware driven through `wrapLanguageModel` and `generateText`, with the AI SDK's
 * own `MockLanguageModelV3` as the model: what the mock receives is what a provider would. Page
 * refusals are read from `lastPack(sessionId).metadata.page_failures`, the middleware's report.
 */
export class AiSdkSubject implements AdapterSubject {
  readonly name = 'ai-sdk-middleware';
  readonly entryPoint =
    'wrapLanguageModel({ model, middleware: contextFoldMiddleware(…) }) + generateText';
  readonly acceptance = AI_SDK_ACCEPTANCE;
  private readonly peer = optionalPeer<[AiModule, AiTestModule]>(
    () => Promise.all([import('ai'), import('ai/test')]),
    'the AI SDK (ai, @ai-sdk/provider), an optional peer, is not installed: npm install ai',
  );

  declare(): string[] {
    return [];
  }

  unavailable(): Promise<string | null> {
    return this.peer.unavailable();
  }

  async open(o: SubjectCaseOptions): Promise<SubjectCase> {
    const [ai, test] = await this.peer.modules();
    return new AiSdkCase(o, ai, test);
  }
}
