import { definePlugin, Type, type RouteContext } from '../../kernel/index.js';
import { loadAssets, type Asset } from './assets.js';

/** Headers of every UI response: no framing, no sniffing, nothing loaded from elsewhere. */
function securityHeaders(scriptHashes: string[]): Record<string, string> {
  const scripts = ["'self'", ...scriptHashes.map((h) => `'sha256-${h}'`)].join(' ');
  return {
    'content-security-policy': `default-src 'none'; script-src ${scripts}; style-src 'self'; img-src 'self' data:; connect-src 'self'; base-uri 'none'; form-action 'self'; frame-ancestors 'none'`,
    'x-content-type-options': 'nosniff',
    'referrer-policy': 'no-referrer',
  };
}

/**
 * The admin web UI at `/`: static ES modules (Preact + htm, no bundler) over the public admin API,
 * signed in by the identity plugin's session cookie. Pages live in web/pages, one file each.
 */
export default definePlugin({
  name: 'admin-ui',
  dependsOn: ['admin-api'],
  config: Type.Object({}),
  register(ctx) {
    const { assets, scriptHashes } = loadAssets();
    const headers = securityHeaders(scriptHashes);
    const serve = (asset: Asset) => (rc: RouteContext) => {
      for (const [k, v] of Object.entries(headers)) rc.res.setHeader(k, v);
      rc.res.setHeader('content-type', asset.type);
      rc.res.setHeader('content-length', asset.body.length);
      // index.html names the module files, so it is always revalidated; they may be cached briefly.
      rc.res.setHeader('cache-control', asset.path === '/' ? 'no-cache' : 'public, max-age=300');
      rc.res.end(asset.body);
    };
    for (const asset of assets) ctx.route('GET', asset.path, serve(asset));
  },
});
