import { defineProvider } from '../../kernel/index.js';
import { OpenRouterAdapter } from './adapter.js';

/** OpenRouter: a built-in provider speaking the Chat Completions format with its own quirks (transform.ts, errors.ts). */
export const openrouterProvider = defineProvider({
  vendor: 'openrouter',
  builtIn: { name: 'openrouter', address: 'https://openrouter.ai/api/v1' },
  create: (settings) => new OpenRouterAdapter(settings),
});

export default openrouterProvider;
