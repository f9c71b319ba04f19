import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { readdirSync, readFileSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { packageRoot } from '../../kernel/paths.js';
import { startWorld, type World } from '../support/provision.js';

/**
 * Issue 9 item 5: every admin endpoint is driven by a test (and the runner runs every suite in
 * both shapes). The admin API's own OpenAPI document lists the endpoints; each must be called
 * with its method somewhere under test/ (`admin.call('GET', `/workspaces/${ws}/spend`)` and the
 * like). A new endpoint without a test fails here.
 */
const test = suite('admin API: every endpoint has a test');
let world: World;
test.before(async () => {
  world = await startWorld();
});
test.after(() => world.stop());

function sources(dir: string): string[] {
  return readdirSync(dir).flatMap((name) => {
    const path = join(dir, name);
    if (statSync(path).isDirectory()) return sources(path);
    return path.endsWith('.ts') ? [readFileSync(path, 'utf8')] : [];
  });
}

const escape = (s: string) => s.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');

/** The path as a literal with `${…}` (or any segment) for each parameter. */
function pathPattern(template: string): string {
  return template
    .split(/\{[^}]+\}/)
    .map(escape)
    .join("(?:\\$\\{[^}]+\\}|[A-Za-z0-9_.:%-]+)");
}

/**
 * Called in a file: the method literal followed by the path literal; or the method followed by a
 * path the file builds (a helper or variable) where the file also spells that path; or a GET by
 * `fetch` of the full `/admin/v1/…` URL.
 */
function called(file: string, method: string, template: string): boolean {
  const path = pathPattern(template);
  if (new RegExp(`'${method}',\\s*[\`']${path}(?:\\?[^\`']*)?[\`']`).test(file)) return true;
  // A workspace helper (`ws('GET', '/routes')`) adds the `/workspaces/${id}` prefix itself.
  const inWorkspace = template.match(/^\/workspaces\/\{[^}]+\}(\/.+)$/)?.[1];
  if (inWorkspace && new RegExp(`ws\\('${method}',\\s*[\`']${pathPattern(inWorkspace)}(?:\\?[^\`']*)?[\`']`).test(file)) return true;
  // A plain fetch of the full admin URL is a GET.
  if (method === 'GET' && new RegExp(`/admin/v1${path}[\`']`).test(file)) return true;
  return new RegExp(`'${method}',\\s*(?:[A-Za-z_]|\`\\$\\{)`).test(file) && new RegExp(`[\`']${path}(?:\\?[^\`']*)?[\`']`).test(file);
}

test('each (method, path) of /admin/v1/openapi.json is called by a test', async () => {
  const doc = (await (await fetch(`${world.svc.url}/admin/v1/openapi.json`)).json()) as { paths: Record<string, Record<string, unknown>> };
  const files = sources(join(packageRoot, 'test'));
  const endpoints = Object.entries(doc.paths).flatMap(([path, ops]) => Object.keys(ops).map((m) => [m.toUpperCase(), path.replace(/^\/admin\/v1/, '')] as const));
  assert.ok(endpoints.length > 20, 'the document lists the admin endpoints');
  const untested = endpoints.filter(([m, p]) => !files.some((f) => called(f, m, p))).map(([m, p]) => `${m} ${p}`);
  assert.equal(untested, []);
});

test.run();
