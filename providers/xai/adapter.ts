import type { ProviderSettings } from '../../kernel/index.js';
import { OpenAICompatibleAdapter, type AdapterSettings } from '../openai-compatible/adapter.js';
import { xaiQuirks } from './transform.js';

/** xAI through the shared Chat Completions adapter (pool, deadlines, stream end rules) with its quirks. */
export class XAIAdapter extends OpenAICompatibleAdapter {
  constructor(settings: ProviderSettings) {
    super({ ...(settings as AdapterSettings), quirks: xaiQuirks });
  }
}
