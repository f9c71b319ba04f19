import { defineProvider } from '../../kernel/index.js';
import { OpenAIAdapter } from './adapter.js';

/** OpenAI's own API: a built-in provider (SPEC.md: needs only a key, comes with priced models). */
export const openaiProvider = defineProvider({
  vendor: 'openai',
  builtIn: { name: 'openai', address: 'https://api.openai.com/v1' },
  create: (settings) => new OpenAIAdapter(settings),
});

export default openaiProvider;
