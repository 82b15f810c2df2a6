/**
 * AI SDK integration: a `LanguageModelV3Middleware` (`ai@6`, `@ai-sdk/provider@3`; `ai@7` accepts
 * V3 middleware too) that turns every call's prompt into a contextfold context pack.
 *
 * @example
 * import { wrapLanguageModel } from 'ai';
 * import { contextFoldMiddleware } from 'contextfold/ai-sdk';
 * const model = wrapLanguageModel({ model: base, middleware: contextFoldMiddleware({ dir: '.contextfold', budget: 32_000 }) });
 */
export {
  type ContextFoldMiddleware,
  type ContextFoldMiddlewareOptions,
  contextFoldMiddleware,
  PROVIDER_OPTIONS_KEY,
} from './middleware.js';
export { fromNeutral, packToPrompt } from './pack-prompt.js';
export { type ConvertedPrompt, messageKey, outputText, toNeutral } from './prompt-messages.js';
