import { createHash } from 'node:crypto';
import { readdirSync, readFileSync } from 'node:fs';
import { extname, join, relative, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { packageRoot } from '../../kernel/paths.js';

export interface Asset {
  /** URL path it is served at. */
  path: string;
  type: string;
  body: Buffer;
}

const types: Record<string, string> = {
  '.html': 'text/html; charset=utf-8',
  '.js': 'text/javascript; charset=utf-8',
  '.mjs': 'text/javascript; charset=utf-8',
  '.css': 'text/css; charset=utf-8',
  '.svg': 'image/svg+xml',
};

/** The web folder ships as source (plain JS, CSS, HTML): tsc does not copy it into dist. */
const webDir = resolve(packageRoot, 'plugins/admin-ui/web');

/** The npm packages the browser imports, by import-map name → the ES module file of the package. */
const vendor: Record<string, string> = { preact: 'preact', 'preact/hooks': 'preact/hooks', htm: 'htm' };

function files(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((e) => (e.isDirectory() ? files(join(dir, e.name)) : [join(dir, e.name)]));
}

/**
 * Reads the UI once at boot: the web folder under /ui/, the vendored ES modules under /ui/vendor/,
 * and index.html at `/` with an import map naming them (its hash goes into the CSP, since an
 * import map is an inline script).
 */
export function loadAssets(): { assets: Asset[]; scriptHashes: string[] } {
  const assets: Asset[] = [];
  const imports: Record<string, string> = {};
  for (const [name, specifier] of Object.entries(vendor)) {
    const file = fileURLToPath(import.meta.resolve(specifier));
    const url = `/ui/vendor/${name.replace('/', '-')}.mjs`;
    imports[name] = url;
    assets.push({ path: url, type: types['.mjs']!, body: readFileSync(file) });
  }
  let index = '';
  for (const file of files(webDir)) {
    const rel = relative(webDir, file).split('\\').join('/');
    if (rel === 'index.html') index = readFileSync(file, 'utf8');
    else assets.push({ path: `/ui/${rel}`, type: types[extname(file)] ?? 'application/octet-stream', body: readFileSync(file) });
  }
  const importMap = JSON.stringify({ imports });
  const html = index.replace('<!--import-map-->', `<script type="importmap">${importMap}</script>`);
  assets.push({ path: '/', type: types['.html']!, body: Buffer.from(html) });
  return { assets, scriptHashes: [createHash('sha256').update(importMap).digest('base64')] };
}
