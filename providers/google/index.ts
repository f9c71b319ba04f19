import { defineProvider } from '../../kernel/index.js';
import { geminiAdapter } from './adapter.js';

/**
 * The built-in Google provider, spoken to in the native Gemini API (`generateContent` /
 * `streamGenerateContent`), API version v1beta. See README.md.
 */
export const googleProvider = defineProvider({
  vendor: 'google',
  builtIn: { name: 'google', address: 'https://generativelanguage.googleapis.com/v1beta' },
  create: (settings) => geminiAdapter(settings),
});

export default googleProvider;
