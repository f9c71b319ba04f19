/**
 * An example third-party plugin, loaded by module path from the operator's config file:
 *
 * ```json
 * { "plugins": { "hello": { "module": "/opt/svc-hello/index.js", "config": { "greeting": "hi" } } } }
 * ```
 *
 * A published plugin would import the kernel API from the `svc` kernel package; this one sits in
 * the repository, so it imports it by relative path. It uses nothing but that public surface.
 */
import { definePlugin, Type, type Static } from '../../kernel/index.js';

/** The plugin's config slice; the kernel fills the default and refuses anything else at boot. */
export const HelloConfig = Type.Object(
  {
    /** Sent as `x-hello` on pipeline responses and returned by GET /hello. */
    greeting: Type.String({ minLength: 1, maxLength: 200, default: 'hello' }),
  },
  { additionalProperties: false },
);

export type HelloConfig = Static<typeof HelloConfig>;

/** The name must match the key under `plugins` in the config. */
export const helloPlugin = definePlugin({
  name: 'hello',
  config: HelloConfig,
  register(ctx) {
    const { greeting } = ctx.config;
    // `receive` runs first for every model request, so the header is on refusals too.
    ctx.hook('receive', (rc) => {
      rc.headers['x-hello'] = greeting;
    });
    ctx.route('GET', '/hello', (rc) => rc.json(200, { greeting }));
  },
});

export default helloPlugin;
