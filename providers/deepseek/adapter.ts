import type { ProviderSettings } from '../../kernel/index.js';
import { OpenAICompatibleAdapter, type AdapterSettings } from '../openai-compatible/adapter.js';
import { deepseekQuirks } from './transform.js';

/** DeepSeek through the shared Chat Completions adapter (pool, deadlines, stream end rules) with its quirks. */
export class DeepSeekAdapter extends OpenAICompatibleAdapter {
  constructor(settings: ProviderSettings) {
    super({ ...(settings as AdapterSettings), quirks: deepseekQuirks });
  }
}
