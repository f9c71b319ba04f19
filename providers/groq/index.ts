import { defineProvider } from '../../kernel/index.js';
import { GroqAdapter } from './adapter.js';

/** Groq: a built-in provider speaking the Chat Completions format with its own quirks (transform.ts, errors.ts). */
export const groqProvider = defineProvider({
  vendor: 'groq',
  builtIn: { name: 'groq', address: 'https://api.groq.com/openai/v1' },
  create: (settings) => new GroqAdapter(settings),
});

export default groqProvider;
