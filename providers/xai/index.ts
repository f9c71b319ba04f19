import { defineProvider } from '../../kernel/index.js';
import { XAIAdapter } from './adapter.js';

/** xAI: a built-in provider speaking the Chat Completions format with its own quirks (transform.ts, errors.ts). */
export const xaiProvider = defineProvider({
  vendor: 'xai',
  builtIn: { name: 'xai', address: 'https://api.x.ai/v1' },
  create: (settings) => new XAIAdapter(settings),
});

export default xaiProvider;
