import { defineProvider } from '../../kernel/index.js';
import { DeepSeekAdapter } from './adapter.js';

/** DeepSeek: a built-in provider speaking the Chat Completions format with its own quirks (transform.ts, errors.ts). */
export const deepseekProvider = defineProvider({
  vendor: 'deepseek',
  builtIn: { name: 'deepseek', address: 'https://api.deepseek.com/v1' },
  create: (settings) => new DeepSeekAdapter(settings),
});

export default deepseekProvider;
