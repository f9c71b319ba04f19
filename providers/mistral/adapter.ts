import type { ProviderSettings } from '../../kernel/index.js';
import { OpenAICompatibleAdapter, type AdapterSettings } from '../openai-compatible/adapter.js';
import { mistralQuirks } from './transform.js';

/** Mistral AI through the shared Chat Completions adapter (pool, deadlines, stream end rules) with its quirks. */
export class MistralAdapter extends OpenAICompatibleAdapter {
  constructor(settings: ProviderSettings) {
    super({ ...(settings as AdapterSettings), quirks: mistralQuirks });
  }
}
