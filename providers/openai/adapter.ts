import type { ProviderSettings } from '../../kernel/index.js';
import { OpenAICompatibleAdapter, type AdapterSettings } from '../openai-compatible/adapter.js';
import { openaiQuirks } from './transform.js';

/** OpenAI's API through the shared Chat Completions adapter, with OpenAI's own request rules. */
export class OpenAIAdapter extends OpenAICompatibleAdapter {
  constructor(settings: ProviderSettings) {
    super({ ...(settings as AdapterSettings), quirks: openaiQuirks });
  }
}
