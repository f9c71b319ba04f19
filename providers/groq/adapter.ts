import type { ProviderSettings } from '../../kernel/index.js';
import { OpenAICompatibleAdapter, type AdapterSettings } from '../openai-compatible/adapter.js';
import { groqQuirks } from './transform.js';

/** Groq through the shared Chat Completions adapter (pool, deadlines, stream end rules) with its quirks. */
export class GroqAdapter extends OpenAICompatibleAdapter {
  constructor(settings: ProviderSettings) {
    super({ ...(settings as AdapterSettings), quirks: groqQuirks });
  }
}
