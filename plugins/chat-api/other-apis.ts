import { GatewayError, type PluginContext } from '../../kernel/index.js';

/**
 * Other vendors' model APIs that clients try by default (the Vercel AI SDK's `openai()` provider
 * calls the Responses API; Anthropic clients call Messages). svc speaks Chat Completions only
 * (SPEC.md Versioning), so these get a 404 that says what to use instead of a bare "no route".
 */
const others: Record<string, string> = {
  '/v1/responses': 'the Responses API',
  '/v1/messages': 'the Messages API',
};

export function refuseOtherApis(ctx: PluginContext): void {
  for (const [path, name] of Object.entries(others)) {
    ctx.route('POST', path, () => {
      throw new GatewayError(
        'not_found',
        `svc speaks the Chat Completions API only (POST /v1/chat/completions), not ${name}. ` +
          "With the Vercel AI SDK use `openai.chat(model)` or `@ai-sdk/openai-compatible`.",
      );
    });
  }
}
