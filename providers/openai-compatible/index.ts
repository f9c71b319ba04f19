import { defineProvider } from '../../kernel/index.js';
import { OpenAICompatibleAdapter, type AdapterSettings } from './adapter.js';

/**
 * The adapter for every admin-added provider: any server that speaks Chat Completions (OpenAI,
 * vLLM, llama.cpp server, Ollama's /v1, LM Studio, OpenRouter, …). Found by the providers plugin
 * through this folder's name.
 */
export const openaiCompatibleProvider = defineProvider({
  vendor: 'openai-compatible',
  create: (settings) => new OpenAICompatibleAdapter(settings as AdapterSettings),
});

export default openaiCompatibleProvider;
