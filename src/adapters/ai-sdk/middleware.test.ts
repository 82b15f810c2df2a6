import { existsSync, readdirSync } from 'node:fs';
import { join } from 'node:path';
import {
  APICallError,
  type LanguageModelV3CallOptions,
  type LanguageModelV3GenerateResult,
  type LanguageModelV3Prompt,
  type LanguageModelV3StreamPart,
} from '@ai-sdk/provider';
import {
  generateText,
  type ModelMessage,
  simulateReadableStream,
  stepCountIs,
  streamText,
  tool,
  wrapLanguageModel,
} from 'ai';
import { MockLanguageModelV3 } from 'ai/test';
import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import { replaySession } from '../../harness/replay.js';
import {
  fakeSecrets,
  leakedFragments,
  secretFragments,
  secretTurn,
} from '../../test-utils/fake-secrets.js';
import { tempDir } from '../../test-utils/temp-dir.js';
import { writtenFiles } from '../../test-utils/written-bytes.js';
import { contextFoldMiddleware } from './middleware.js';

const usage = {
  inputTokens: { total: 10, noCache: 10, cacheRead: undefined, cacheWrite: undefined },
  outputTokens: { total: 5, text: 5, reasoning: undefined },
};
const text = (t: string): LanguageModelV3GenerateResult => ({
  content: [{ type: 'text', text: t }],
  finishReason: { unified: 'stop', raw: 'stop' },
  usage,
  warnings: [],
});
const toolCall = (id: string, name: string, input: unknown): LanguageModelV3GenerateResult => ({
  content: [{ type: 'tool-call', toolCallId: id, toolName: name, input: JSON.stringify(input) }],
  finishReason: { unified: 'tool-calls', raw: 'tool_use' },
  usage,
  warnings: [],
});

/** Everything a prompt sent to the model says, as text (to look for pages and records). */
const promptText = (p: LanguageModelV3Prompt) => JSON.stringify(p);
const pagesIn = (p: LanguageModelV3Prompt) =>
  [...promptText(p).matchAll(/<archived_record step_id=\\"(\d+)\\"/g)].map((m) => Number(m[1]));

/** Every tool result directly follows the assistant message that made its call, and every call is answered. */
function expectPairsTogether(prompt: LanguageModelV3Prompt): void {
  prompt.forEach((m, i) => {
    if (m.role === 'tool') {
      const prev = prompt
        .slice(0, i)
        .reverse()
        .find((x) => x.role !== 'tool');
      const calls =
        prev?.role === 'assistant'
          ? prev.content.filter((c) => c.type === 'tool-call').map((c) => c.toolCallId)
          : [];
      for (const r of m.content)
        if (r.type === 'tool-result') expect(calls).toContain(r.toolCallId);
    }
    if (m.role === 'assistant') {
      const answered = prompt
        .slice(i + 1)
        .filter((x) => x.role === 'tool')
        .flatMap((x) => x.content.map((r) => (r.type === 'tool-result' ? r.toolCallId : '')));
      for (const c of m.content)
        if (c.type === 'tool-call') expect(answered).toContain(c.toolCallId);
    }
  });
}

/**
 * The system prompt of the conversations below, passed as `system` (as the AI SDK asks; a system
 * message inside `messages` makes it print a prompt-injection warning). The middleware sees it
 * as the first message of the prompt either way.
 */
const SYSTEM = 'You are a careful coding agent.';

/** A long conversation: an early verbose tool run configures PostgreSQL, then unrelated work. */
function history(): ModelMessage[] {
  const log = Array.from({ length: 120 }, (_, i) => `migration ${i}: applied`).join('\n');
  const msgs: ModelMessage[] = [
    { role: 'user', content: 'Configure PostgreSQL and run the migrations.' },
    {
      role: 'assistant',
      content: [
        {
          type: 'tool-call',
          toolCallId: 'c1',
          toolName: 'shell',
          input: { command: 'psql -p 5433 && mix ecto.migrate' },
        },
      ],
    },
    {
      role: 'tool',
      content: [
        {
          type: 'tool-result',
          toolCallId: 'c1',
          toolName: 'shell',
          output: { type: 'text', value: `PostgreSQL listening on port 5433\n${log}` },
        },
      ],
    },
    { role: 'assistant', content: 'PostgreSQL runs on port 5433 and the migrations are applied.' },
  ];
  for (let i = 0; i < 8; i++) {
    msgs.push({ role: 'user', content: `Write unit test number ${i} for the invoice formatter.` });
    msgs.push({
      role: 'assistant',
      content: `Added test ${i} in test/invoice_formatter_${i}_test.exs.`,
    });
  }
  return msgs;
}

function setup(extra: Partial<Parameters<typeof contextFoldMiddleware>[0]> = {}) {
  const middleware = contextFoldMiddleware({
    dir: tempDir().dir,
    budget: 4000,
    keepRecent: 2,
    foldThreshold: 64,
    tokenizer: 'reference',
    ...extra,
  });
  return middleware;
}

describe('contextFoldMiddleware with generateText', () => {
  it('pages archived turns into call N only; call N+1 carries none of them (CONF-07)', async () => {
    const mw = setup();
    const mock = new MockLanguageModelV3({ doGenerate: [text('Port 5433.'), text('Done.')] });
    const model = wrapLanguageModel({ model: mock, middleware: mw });
    const messages = [
      ...history(),
      { role: 'user' as const, content: 'Which port is PostgreSQL listening on?' },
    ];
    const first = await generateText({ model, system: SYSTEM, messages });
    const p1 = mock.doGenerateCalls[0]!.prompt;
    // The old tool run was folded (a record in L2) and paged back in, verified, at the end of the prompt.
    expect(promptText(p1)).toContain('Folded steps:');
    const last = p1.at(-1)!;
    expect(last.role).toBe('user');
    const lastText = JSON.stringify(last.content);
    expect(lastText).toContain('Which port is PostgreSQL listening on?');
    expect(lastText).toContain('PostgreSQL listening on port 5433');
    expect(pagesIn(p1).length).toBeGreaterThan(0);
    expect(pagesIn(p1.slice(0, -1))).toEqual([]);
    const pack1 = mw.lastPack()!;
    expect(pack1.metadata.page_tokens).toBeGreaterThan(0);

    await generateText({
      model,
      system: SYSTEM,
      messages: [
        ...messages,
        ...first.response.messages,
        { role: 'user', content: 'Now add a test for the tax rounding.' },
      ],
    });
    const p2 = mock.doGenerateCalls[1]!.prompt;
    expect(pagesIn(p2)).toEqual([]);
    expect(promptText(p2)).not.toContain('migration 119: applied');
    expect(mw.lastPack()!.metadata.page_tokens).toBe(0);
    await mw.close();
  });

  it('runs a multi-step tool loop; calls and results stay together in every prompt', async () => {
    const mw = setup();
    const mock = new MockLanguageModelV3({
      doGenerate: [
        toolCall('t1', 'readFile', { path: 'config/database.yml' }),
        toolCall('t2', 'readFile', { path: 'mix.exs' }),
        text('Both read.'),
      ],
    });
    const model = wrapLanguageModel({ model: mock, middleware: mw });
    const r = await generateText({
      model,
      system: SYSTEM,
      messages: [
        ...history(),
        {
          role: 'user',
          content: 'Read config/database.yml and mix.exs, then report the PostgreSQL port.',
        },
      ],
      tools: {
        readFile: tool({
          inputSchema: z.object({ path: z.string() }),
          execute: async ({ path }) => `contents of ${path}: port: 5433`,
        }),
      },
      stopWhen: stepCountIs(5),
    });
    expect(r.text).toBe('Both read.');
    expect(mock.doGenerateCalls).toHaveLength(3);
    for (const call of mock.doGenerateCalls) expectPairsTogether(call.prompt);
    // Continuations carry the pending tool output, and no pages from the first call.
    const p3 = mock.doGenerateCalls[2]!.prompt;
    expect(promptText(p3)).toContain('contents of mix.exs: port: 5433');
    expect(pagesIn(p3)).toEqual([]);
    const session = await mw.session();
    expect(session.status().open_turn).toBeNull();
    await mw.close();
  });

  it('keeps original messages (files, provider options) verbatim and removes its own provider options', async () => {
    const mw = setup({ budget: 20_000 });
    const mock = new MockLanguageModelV3({ doGenerate: [text('A cat.')] });
    const model = wrapLanguageModel({ model: mock, middleware: mw });
    const image = new Uint8Array([137, 80, 78, 71]);
    await generateText({
      model,
      system: 'Be brief.',
      messages: [
        {
          role: 'user',
          content: [
            { type: 'text', text: 'What is in this picture?' },
            { type: 'image', image, mediaType: 'image/png' },
          ],
          providerOptions: { anthropic: { cacheControl: { type: 'ephemeral' } } },
        },
      ],
      providerOptions: { contextfold: { sessionId: 'pictures' }, openai: { user: 'u1' } },
    });
    const call: LanguageModelV3CallOptions = mock.doGenerateCalls[0]!;
    expect(call.providerOptions).toEqual({ openai: { user: 'u1' } });
    const user = call.prompt.at(-1)!;
    expect(user.providerOptions).toEqual({ anthropic: { cacheControl: { type: 'ephemeral' } } });
    if (user.role !== 'user') throw new Error('expected the user message last');
    expect(user.content.some((p) => p.type === 'file' && p.mediaType === 'image/png')).toBe(true);
    expect(await mw.session('pictures')).toBeDefined();
    expect((await mw.session('pictures')).history().map((m) => m.content)).toEqual([
      'Be brief.',
      'What is in this picture?\n[file: image/png]',
    ]);
    await mw.close();
  });

  it('a prompt with a pasted secret keeps its files and provider options; only the text is redacted', async () => {
    // Before, the redacted prompt was rebuilt from its text alone: the image and the message's
    // provider options were dropped.
    const mw = setup({ budget: 20_000 });
    const mock = new MockLanguageModelV3({ doGenerate: [text('A cat.')] });
    const model = wrapLanguageModel({ model: mock, middleware: mw });
    const token = fakeSecrets('parts').githubToken;
    await generateText({
      model,
      messages: [
        {
          role: 'user',
          content: [
            { type: 'text', text: `My token is ${token}. What is in this picture?` },
            { type: 'image', image: new Uint8Array([137, 80, 78, 71]), mediaType: 'image/png' },
          ],
          providerOptions: { anthropic: { cacheControl: { type: 'ephemeral' } } },
        },
      ],
    });
    const user = mock.doGenerateCalls[0]!.prompt.at(-1)!;
    if (user.role !== 'user') throw new Error('expected the user message last');
    expect(user.providerOptions).toEqual({ anthropic: { cacheControl: { type: 'ephemeral' } } });
    expect(user.content.some((p) => p.type === 'file' && p.mediaType === 'image/png')).toBe(true);
    const sent = user.content.flatMap((p) => (p.type === 'text' ? [p.text] : [])).join('\n');
    expect(sent).toContain('My token is [REDACTED:github-token]. What is in this picture?');
    expect(sent).not.toContain(token.slice(4, 16));
    await mw.close();
  });

  it('pages after a pending tool output keep the other results of its message whole (an image too)', async () => {
    // Before, pages on one result rebuilt every result of the message from text: the
    // screenshot's image became a label.
    const mw = setup({ budget: 6000, pageInToolOutput: true });
    const mock = new MockLanguageModelV3({ doGenerate: [text('a')] });
    const model = wrapLanguageModel({ model: mock, middleware: mw });
    const log = Array.from({ length: 200 }, (_, i) => `kafka cfg ${i}`).join('\n');
    const messages: ModelMessage[] = [
      { role: 'user', content: 'check the kafka broker config' },
      {
        role: 'assistant',
        content: [{ type: 'tool-call', toolCallId: 'k1', toolName: 'sh', input: {} }],
      },
      {
        role: 'tool',
        content: [
          {
            type: 'tool-result',
            toolCallId: 'k1',
            toolName: 'sh',
            output: {
              type: 'text',
              value: `KAFKA_BROKER_PORT=9094 retention.ms=604800000\n${log}`,
            },
          },
        ],
      },
      { role: 'assistant', content: 'ok' },
    ];
    for (let i = 0; i < 4; i++) {
      messages.push({ role: 'user', content: `t${i}` }, { role: 'assistant', content: `d${i}` });
    }
    const screenshot = {
      type: 'content' as const,
      value: [
        { type: 'text' as const, text: 'screen' },
        { type: 'image-data' as const, data: 'iVBORw0KGgo=', mediaType: 'image/png' },
      ],
    };
    messages.push(
      { role: 'user', content: 'run the producer test and take a screenshot' },
      {
        role: 'assistant',
        content: [
          { type: 'tool-call', toolCallId: 's1', toolName: 'screenshot', input: {} },
          { type: 'tool-call', toolCallId: 'p1', toolName: 'producer', input: {} },
        ],
      },
      {
        role: 'tool',
        content: [
          { type: 'tool-result', toolCallId: 's1', toolName: 'screenshot', output: screenshot },
          {
            type: 'tool-result',
            toolCallId: 'p1',
            toolName: 'producer',
            output: {
              type: 'text',
              value: 'cannot connect to KAFKA_BROKER_PORT retention.ms broker',
            },
          },
        ],
      },
    );
    await generateText({ model, system: 'S', messages });
    const tool = mock.doGenerateCalls[0]!.prompt.at(-1)!;
    if (tool.role !== 'tool') throw new Error('expected the pending tool output last');
    const [shot, producer] = tool.content;
    expect(shot).toMatchObject({ type: 'tool-result', toolCallId: 's1', output: screenshot });
    if (producer?.type !== 'tool-result' || producer.output.type !== 'text') {
      throw new Error('expected the producer result as text');
    }
    expect(producer.output.value).toMatch(
      /^cannot connect to KAFKA_BROKER_PORT retention\.ms broker\n\n<archived_record step_id="2"/,
    );
    await mw.close();
  });

  it('sends the approval of a provider-executed tool (a tool message with no tool result) on', async () => {
    // It has no neutral message, so the prompt rebuilt from the pack dropped it: the provider
    // never got the approval its tool call waits for.
    const mw = setup();
    const mock = new MockLanguageModelV3({ doGenerate: [text('Found it.')] });
    const model = wrapLanguageModel({ model: mock, middleware: mw });
    const messages: ModelMessage[] = [
      ...history(),
      { role: 'user', content: 'Search the repository with the MCP tool.' },
      {
        role: 'assistant',
        content: [
          {
            type: 'tool-call',
            toolCallId: 'mcp1',
            toolName: 'mcp_search',
            input: { q: 'VAT' },
            providerExecuted: true,
          },
          { type: 'tool-approval-request', approvalId: 'ap1', toolCallId: 'mcp1' },
        ],
      },
      {
        role: 'tool',
        content: [
          {
            type: 'tool-approval-response',
            approvalId: 'ap1',
            approved: true,
            providerExecuted: true,
          },
        ],
      },
    ];
    await generateText({ model, system: SYSTEM, messages });
    const sent = mock.doGenerateCalls[0]!.prompt;
    expect(sent.slice(-2)).toEqual([
      {
        role: 'assistant',
        content: [
          expect.objectContaining({
            type: 'tool-call',
            toolCallId: 'mcp1',
            providerExecuted: true,
          }),
        ],
      },
      {
        role: 'tool',
        content: [{ type: 'tool-approval-response', approvalId: 'ap1', approved: true }],
      },
    ]);
    await mw.close();
  });

  it('keeps sessions apart by providerOptions.contextfold.sessionId', async () => {
    const mw = setup();
    const mock = new MockLanguageModelV3({ doGenerate: [text('a'), text('b')] });
    const model = wrapLanguageModel({ model: mock, middleware: mw });
    await generateText({
      model,
      system: SYSTEM,
      messages: history().slice(0, 4),
      providerOptions: { contextfold: { sessionId: 'one' } },
    });
    await generateText({
      model,
      prompt: 'hello',
      providerOptions: { contextfold: { sessionId: 'two' } },
    });
    expect((await mw.session('one')).history()).toHaveLength(5);
    expect((await mw.session('two')).history().map((m) => m.content)).toEqual(['hello']);
    await mw.close();
  });

  it('two instances on one store take turns on a session: each reads the other’s writes, the log stays whole', async () => {
    // Two workers, two serverless instances, or a hot reload. Before, the instance with a stale
    // copy appended from its own step count and no later open could read the log again.
    const dir = tempDir().dir;
    const mk = () => contextFoldMiddleware({ dir, budget: 4000, tokenizer: 'reference' });
    const a = mk();
    const b = mk();
    const conversation: ModelMessage[] = [];
    const ask = async (mw: ReturnType<typeof mk>, q: string) => {
      conversation.push({ role: 'user', content: q });
      const model = wrapLanguageModel({
        model: new MockLanguageModelV3({ doGenerate: [text(`re: ${q}`)] }),
        middleware: mw,
      });
      const r = await generateText({ model, messages: conversation });
      conversation.push(...r.response.messages);
    };
    await ask(a, 'one');
    await ask(b, 'two');
    await ask(a, 'three');
    await ask(b, 'four');
    await a.close();
    await b.close();
    const again = mk();
    const history = (await again.session()).history().map((m) => m.content);
    // The last answer joins the history with the next call's prompt.
    expect(history).toEqual(['one', 're: one', 'two', 're: two', 'three', 're: three', 'four']);
    await again.close();
  });

  it('refuses session ids that would name a directory above the session (`.`, `..`)', async () => {
    const mw = setup();
    const model = wrapLanguageModel({
      model: new MockLanguageModelV3({ doGenerate: [text('a')] }),
      middleware: mw,
    });
    for (const sessionId of ['..', '.', '.hidden']) {
      await expect(
        generateText({
          model,
          prompt: 'hello',
          maxRetries: 0,
          providerOptions: { contextfold: { sessionId } },
        }),
      ).rejects.toThrow(/not starting with '\.'/);
    }
    await mw.close();
  });

  it('refuses an option it does not know when it is made, naming it', () => {
    // keep_recent (for keepRecent) was ignored: the default of 10 applied silently.
    expect(() =>
      contextFoldMiddleware({
        dir: tempDir().dir,
        budget: 4000,
        keep_recent: 2,
      } as Parameters<typeof contextFoldMiddleware>[0]),
    ).toThrow(
      /^contextFoldMiddleware has no option 'keep_recent' \(options: dir, store, sessionId, budget,/,
    );
  });

  it.each<[string, Record<string, unknown>, string]>([
    // It said `got 4000`, which reads as a valid budget.
    [
      'a budget given as a string',
      { budget: '4000' },
      'budget must be an integer >= 1, got "4000"',
    ],
    ['no budget', { budget: undefined }, 'budget must be an integer >= 1, got undefined'],
    ['a high-water mark over 1', { highWater: 2 }, 'highWater must be a number between 0 and 1'],
    ['an unknown tokenizer', { tokenizer: 'gpt2' }, "tokenizer must be 'o200k', 'reference'"],
    ['an unknown retrieval', { retrieval: 'fuzzy' }, "retrieval must be 'ranked' or 'reference'"],
    [
      'a bad policy',
      { policy: { max_rehydration_tokens_per_call: -1 } },
      'invalid hydration policy',
    ],
    ['redact as a string', { redact: 'no' }, 'redact must be true or false, got "no"'],
  ])('refuses %s when it is made, not on its first call', (_, bad, message) => {
    const dir = join(tempDir().dir, 'store');
    expect(() =>
      contextFoldMiddleware({ dir, budget: 4000, ...bad } as Parameters<
        typeof contextFoldMiddleware
      >[0]),
    ).toThrow(message);
    expect(existsSync(dir)).toBe(false);
  });

  it('refuses a providerOptions.contextfold key it does not know, writing nothing', async () => {
    const mw = setup();
    const model = wrapLanguageModel({
      model: new MockLanguageModelV3({ doGenerate: [text('a')] }),
      middleware: mw,
    });
    // A misspelt session_id was ignored: the conversation went to the default session silently.
    await expect(
      generateText({
        model,
        prompt: 'hello from alice',
        maxRetries: 0,
        providerOptions: { contextfold: { session_id: 'alice' } },
      }),
    ).rejects.toThrow("providerOptions.contextfold takes only sessionId, not 'session_id'");
    expect((await mw.session()).history()).toEqual([]);
    await mw.close();
  });

  it('refuses such ids in session() and lastPack() too, opening nothing', async () => {
    const base = tempDir().dir;
    const mw = contextFoldMiddleware({ dir: join(base, 'store'), budget: 4000 });
    // session('../../x') opened (and created) a store beside the base directory.
    for (const id of ['..', '../../escape', '.', 'a/b', '']) {
      await expect(mw.session(id)).rejects.toThrow(/not starting with '\.'/);
      expect(() => mw.lastPack(id)).toThrow(/not starting with '\.'/);
    }
    expect(readdirSync(base)).toEqual([]);
    await mw.close();
    expect(() => contextFoldMiddleware({ dir: base, budget: 4000, sessionId: '..' })).toThrow(
      /not starting with '\.'/,
    );
  });

  it('answers a call in flight when close() runs, and the next middleware continues it', async () => {
    const dir = tempDir().dir;
    let release = (): void => {};
    const answered = new Promise<void>((r) => {
      release = r;
    });
    const model = new MockLanguageModelV3({
      doGenerate: async () => {
        await answered;
        return text('late answer');
      },
    });
    const mw = contextFoldMiddleware({ dir, budget: 4000, tokenizer: 'reference' });
    const call = generateText({
      model: wrapLanguageModel({ model, middleware: mw }),
      prompt: 'slow question',
      maxRetries: 0,
    });
    while (model.doGenerateCalls.length === 0) await new Promise((r) => setTimeout(r, 5));
    const closed = mw.close();
    release();
    // It was refused with 'this session is closed; open it again' after the model had answered.
    expect((await call).text).toBe('late answer');
    await closed;
    const again = contextFoldMiddleware({ dir, budget: 4000, tokenizer: 'reference' });
    const next = await generateText({
      model: wrapLanguageModel({
        model: new MockLanguageModelV3({ doGenerate: [text('ok')] }),
        middleware: again,
      }),
      messages: [
        { role: 'user', content: 'slow question' },
        { role: 'assistant', content: 'late answer' },
        { role: 'user', content: 'next' },
      ],
      maxRetries: 0,
    });
    expect(next.text).toBe('ok');
    expect((await again.session()).history().map((m) => m.content)).toEqual([
      'slow question',
      'late answer',
      'next',
    ]);
    await again.close();
  });

  it('refuses a prompt that does not continue the session history', async () => {
    const mw = setup();
    const model = wrapLanguageModel({
      model: new MockLanguageModelV3({ doGenerate: [text('a'), text('b')] }),
      middleware: mw,
    });
    await generateText({ model, prompt: 'first conversation' });
    await expect(
      generateText({ model, prompt: 'another conversation', maxRetries: 0 }),
    ).rejects.toThrow(/the prompt does not continue session \(default\): message 0 differs/);
    await mw.close();
  });

  it('refuses a system prompt dropped within a session, naming the system prompt', async () => {
    const mw = setup();
    const model = wrapLanguageModel({
      model: new MockLanguageModelV3({ doGenerate: [text('a'), text('b')] }),
      middleware: mw,
    });
    const messages: ModelMessage[] = [{ role: 'user', content: 'hi' }];
    const first = await generateText({ model, system: SYSTEM, messages });
    messages.push(...first.response.messages, { role: 'user', content: 'and?' });
    await expect(generateText({ model, messages, maxRetries: 0 })).rejects.toThrow(
      /message 0 differs from its history \(the system prompt: its text may change from call to call, but a system message cannot be added or removed within a session/,
    );
    await mw.close();
  });

  it("takes a changed system prompt as the app's new instructions: same session, new text sent, replayed", async () => {
    const dir = tempDir().dir;
    const mw = setup({ dir });
    const mock = new MockLanguageModelV3({ doGenerate: [text('a'), text('b')] });
    const model = wrapLanguageModel({ model: mock, middleware: mw });
    const messages: ModelMessage[] = [...history(), { role: 'user', content: 'Next test.' }];
    const first = await generateText({ model, system: 'Today is 2026-12-05.', messages });
    const folded = (await mw.session()).status().folded;
    expect(folded).toBeGreaterThan(0);
    messages.push(...first.response.messages, {
      role: 'user',
      content: 'Which port is PostgreSQL listening on?',
    });
    await generateText({ model, system: 'Today is 2026-12-06.', messages, maxRetries: 0 });
    const p2 = mock.doGenerateCalls[1]!.prompt;
    expect(p2[0]).toMatchObject({ role: 'system', content: 'Today is 2026-12-06.' });
    expect(promptText(p2)).not.toContain('2026-12-05.');
    // The archived turns stayed in this session: the old tool run is paged back in from it.
    expect(promptText(p2)).toContain('PostgreSQL listening on port 5433');
    const session = await mw.session();
    expect(session.history()[0]!.content).toBe('Today is 2026-12-06.');
    expect(session.status().folded).toBeGreaterThanOrEqual(folded);
    await mw.close();
    const replay = await replaySession({ dir });
    expect(replay.mismatch).toBeNull();
    expect(replay.packs).toHaveLength(2);
  });

  it('resends the same prompt when a call is retried, recording the prompt once', async () => {
    const mw = setup();
    let n = 0;
    const mock = new MockLanguageModelV3({
      doGenerate: async () => {
        n++;
        if (n === 1) {
          throw new APICallError({
            message: 'overloaded',
            url: 'https://x',
            requestBodyValues: {},
            isRetryable: true,
          });
        }
        return text('ok');
      },
    });
    const model = wrapLanguageModel({ model: mock, middleware: mw });
    const messages = [
      ...history(),
      { role: 'user' as const, content: 'Which port is PostgreSQL listening on?' },
    ];
    await generateText({ model, system: SYSTEM, messages, maxRetries: 1 });
    expect(mock.doGenerateCalls).toHaveLength(2);
    expect(pagesIn(mock.doGenerateCalls[0]!.prompt).length).toBeGreaterThan(0);
    expect(mock.doGenerateCalls[1]!.prompt).toEqual(mock.doGenerateCalls[0]!.prompt);
    const prompts = (await mw.session())
      .history()
      .filter((m) => m.content === 'Which port is PostgreSQL listening on?');
    expect(prompts).toHaveLength(1);
    expect((await mw.session()).status().open_turn).toBeNull();
    await mw.close();
  });
});

describe('contextFoldMiddleware with streamText', () => {
  const streamOf = (parts: LanguageModelV3StreamPart[]) => ({
    stream: simulateReadableStream({ chunks: parts }),
  });
  const finish = (reason: 'stop' | 'tool-calls'): LanguageModelV3StreamPart => ({
    type: 'finish',
    finishReason: { unified: reason, raw: reason },
    usage,
  });

  it('runs a streamed tool loop, pages only in the first call, and closes the turn when the stream ends', async () => {
    const mw = setup();
    const mock = new MockLanguageModelV3({
      doStream: [
        streamOf([
          {
            type: 'tool-call',
            toolCallId: 's1',
            toolName: 'readFile',
            input: JSON.stringify({ path: 'config/database.yml' }),
          },
          finish('tool-calls'),
        ]),
        streamOf([
          { type: 'text-start', id: 'x' },
          { type: 'text-delta', id: 'x', delta: 'Port 5433.' },
          { type: 'text-end', id: 'x' },
          finish('stop'),
        ]),
      ],
    });
    const model = wrapLanguageModel({ model: mock, middleware: mw });
    const result = streamText({
      model,
      system: SYSTEM,
      messages: [
        ...history(),
        {
          role: 'user',
          content: 'Which port is PostgreSQL listening on? Check config/database.yml.',
        },
      ],
      tools: {
        readFile: tool({
          inputSchema: z.object({ path: z.string() }),
          execute: async ({ path }) => `${path}: port: 5433`,
        }),
      },
      stopWhen: stepCountIs(3),
    });
    expect(await result.text).toBe('Port 5433.');
    expect(mock.doStreamCalls).toHaveLength(2);
    const [p1, p2] = mock.doStreamCalls.map((c) => c.prompt);
    expect(pagesIn(p1!).length).toBeGreaterThan(0);
    expect(pagesIn(p2!)).toEqual([]);
    for (const p of [p1!, p2!]) expectPairsTogether(p);
    expect((await mw.session()).status().open_turn).toBeNull();
    await mw.close();
  });
});

describe('contextFoldMiddleware and secrets', () => {
  it('nothing it writes holds a secret from the conversation; the model gets the markers', async () => {
    const secrets = fakeSecrets('middleware');
    const dir = tempDir().dir;
    const mw = setup({ dir });
    const mock = new MockLanguageModelV3({ doGenerate: [text('Noted.')] });
    const model = wrapLanguageModel({ model: mock, middleware: mw });
    const messages: ModelMessage[] = [
      ...history(),
      {
        role: 'user',
        content: `Here is our .env:\n${secretTurn(secrets)}\nWhich port is PostgreSQL on?`,
      },
    ];
    await generateText({ model, messages });
    await mw.close();
    const sent = promptText(mock.doGenerateCalls[0]!.prompt);
    expect(sent).toContain('[REDACTED:github-token]');
    const written = writtenFiles(dir).map((f) => f.bytes);
    expect(written.length).toBeGreaterThan(0);
    expect(leakedFragments(Buffer.from(sent), secretFragments(secrets))).toEqual([]);
    for (const b of written) expect(leakedFragments(b, secretFragments(secrets))).toEqual([]);
  });
});
