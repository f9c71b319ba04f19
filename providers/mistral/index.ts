import { defineProvider } from '../../kernel/index.js';
import { MistralAdapter } from './adapter.js';

/** Mistral AI: a built-in provider speaking the Chat Completions format with its own quirks (transform.ts, errors.ts). */
export const mistralProvider = defineProvider({
  vendor: 'mistral',
  builtIn: { name: 'mistral', address: 'https://api.mistral.ai/v1' },
  create: (settings) => new MistralAdapter(settings),
});

export default mistralProvider;
