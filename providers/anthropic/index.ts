import { defineProvider } from '../../kernel/index.js';
import { anthropicAdapter } from './adapter.js';

/**
 * The built-in Anthropic provider, spoken to in its native Messages API (not its
 * OpenAI-compatibility layer, which drops cache usage, PDFs and refusals). See README.md.
 */
export const anthropicProvider = defineProvider({
  vendor: 'anthropic',
  builtIn: { name: 'anthropic', address: 'https://api.anthropic.com/v1' },
  create: (settings) => anthropicAdapter(settings),
});

export default anthropicProvider;
