import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { createBacking, shape, type Backing } from '../support/harness.js';
import { backingEnv, cleanEnv, freePort, pluginSource, repoRoot, runCli, startCli, tempDir } from './fixtures/cli.js';

const test = suite(`config and plugin start-up checks, real CLI (${shape})`);
let backing: Backing;
const helloModule = join(repoRoot, 'dist/examples/hello-plugin/index.js');

test.before(async () => {
  backing = await createBacking();
});
test.after(async () => {
  await backing.drop();
});

/** Runs `svc serve` with a config file (or none) and extra variables; it must fail to start. */
async function failsToStart(config: Record<string, unknown> | null, extra: Record<string, string> = {}, files: Record<string, string> = {}) {
  const dir = tempDir(files);
  const env: Record<string, string> = { ...backingEnv(backing), ...extra };
  // SVC_PORT would override the file's server.port (environment wins), hiding a bad value there.
  if (!config?.server && !env.SVC_PORT) env.SVC_PORT = String(await freePort());
  if (config) {
    writeFileSync(join(dir, 'svc.json'), JSON.stringify(config));
    env.SVC_CONFIG = join(dir, 'svc.json');
  }
  const r = await runCli(['serve'], cleanEnv(env));
  assert.is(r.code, 1, `exit code; stderr: ${r.stderr}`);
  assert.not.match(r.stdout, /api\.started/);
  // One clear line on stderr, no stack trace.
  assert.match(r.stderr, /^svc: [^\n]+\n$/);
  return r.stderr;
}

test('SVC_PORT=abc stops start-up naming server.port and the variable', async () => {
  const err = await failsToStart(null, { SVC_PORT: 'abc' });
  assert.match(err, /invalid config field server\.port \(SVC_PORT\)/);
});

test('SVC_LOG_LEVEL outside the listed levels stops start-up naming log.level', async () => {
  assert.match(await failsToStart(null, { SVC_LOG_LEVEL: 'loud' }), /invalid config field log\.level/);
});

test('config file with server.port "x" stops start-up naming server.port', async () => {
  assert.match(await failsToStart({ server: { port: 'x' } }), /invalid config field server\.port: Expected integer/);
});

test('config file with an unknown top-level key or nested key stops start-up naming it', async () => {
  assert.match(await failsToStart({ bogus: true }), /invalid config field bogus: Unexpected property/);
  assert.match(await failsToStart({ server: { prot: 80 } }), /invalid config field server\.prot: Unexpected property/);
});

test('SVC_CONFIG naming a missing file, or a file that is not JSON, stops start-up', async () => {
  assert.match(await failsToStart(null, { SVC_CONFIG: '/nonexistent/svc.json' }), /config file \/nonexistent\/svc\.json \(SVC_CONFIG\) does not exist/);
  const dir = tempDir({ 'bad.json': '{ "server": ' });
  assert.match(await failsToStart(null, { SVC_CONFIG: join(dir, 'bad.json') }), /config file .*bad\.json: /);
});

test('a plugin key that is not a lower-case name stops start-up naming it', async () => {
  assert.match(await failsToStart({ plugins: { Bad_Name: {} } }), /invalid config field plugins\.Bad_Name/);
});

test('an invalid plugin config slice names plugins.<name>.config.<field>', async () => {
  const bad = (config: Record<string, unknown>) => failsToStart({ plugins: { hello: { module: helloModule, config } } });
  assert.match(await bad({ greeting: '' }), /invalid config field plugins\.hello\.config\.greeting: Expected string length greater or equal to 1/);
  assert.match(await bad({ greeting: ['a'] }), /invalid config field plugins\.hello\.config\.greeting/);
  assert.match(await bad({ shout: true }), /invalid config field plugins\.hello\.config\.shout: Unexpected property/);
});

test('an unknown plugin dependency stops start-up naming both plugins', async () => {
  const err = await failsToStart({ plugins: { needy: { module: './needy.mjs' } } }, {}, { 'needy.mjs': pluginSource('needy', { dependsOn: ['missing-one'] }) });
  assert.match(err, /plugin "needy" depends on "missing-one", which is not configured or is disabled/);
});

test('a dependency on a disabled plugin stops start-up', async () => {
  const files = { 'needy.mjs': pluginSource('needy', { dependsOn: ['hello'] }) };
  const err = await failsToStart({ plugins: { hello: { module: helloModule, enabled: false }, needy: { module: './needy.mjs' } } }, {}, files);
  assert.match(err, /plugin "needy" depends on "hello", which is not configured or is disabled/);
});

test('a dependency cycle stops start-up showing the cycle', async () => {
  const files = {
    'a.mjs': pluginSource('cyc-a', { dependsOn: ['cyc-c'] }),
    'b.mjs': pluginSource('cyc-b', { dependsOn: ['cyc-a'] }),
    'c.mjs': pluginSource('cyc-c', { dependsOn: ['cyc-b'] }),
  };
  const err = await failsToStart({ plugins: { 'cyc-a': { module: './a.mjs' }, 'cyc-b': { module: './b.mjs' }, 'cyc-c': { module: './c.mjs' } } }, {}, files);
  assert.match(err, /plugin dependency cycle: cyc-a -> cyc-c -> cyc-b -> cyc-a/);
});

test('a missing plugin module stops start-up: built-in name and module path', async () => {
  assert.match(await failsToStart({ plugins: { ghost: {} } }), /plugin 'ghost': module not found at .*dist\/plugins\/ghost\/index\.js \(no built-in plugin of that name\)/);
  const err = await failsToStart({ plugins: { lost: { module: './lost.mjs' } } });
  assert.match(err, /plugin 'lost': module not found at \/.*\/lost\.mjs\n/);
});

test('a module that exports no plugin, or a plugin under another name, stops start-up', async () => {
  const files = { 'nothing.mjs': 'export const x = 1;\n', 'other.mjs': pluginSource('other-name') };
  assert.match(await failsToStart({ plugins: { nothing: { module: './nothing.mjs' } } }, {}, files), /plugin 'nothing': .*nothing\.mjs does not default-export a plugin/);
  assert.match(await failsToStart({ plugins: { mine: { module: './other.mjs' } } }, {}, files), /plugin 'mine': the module at .*other\.mjs is named 'other-name'/);
});

test('a plugin hooking an unknown phase stops start-up listing the phases', async () => {
  const files = { 'typo.mjs': pluginSource('typo', { register: "ctx.hook('recieve', () => {});" }) };
  const err = await failsToStart({ plugins: { typo: { module: './typo.mjs' } } }, {}, files);
  assert.match(err, /plugin typo hooks unknown phase "recieve"; phases are: receive, authenticate, validate, conversation, select, capabilities, admit, hold, dispatch, settle/);
});

test('control: a relative plugin path resolves against the config file folder; SVC_PORT wins over the file', async () => {
  const dir = tempDir({ 'ok.mjs': pluginSource('fine', { register: "ctx.route('GET', '/fine', (rc) => rc.json(200, { fine: true }));" }) });
  writeFileSync(join(dir, 'svc.json'), JSON.stringify({ server: { port: 1 }, plugins: { fine: { module: './ok.mjs' } } }));
  const port = await freePort();
  const cli = startCli(['serve'], cleanEnv({ ...backingEnv(backing), SVC_PORT: String(port), SVC_CONFIG: join(dir, 'svc.json') }));
  try {
    const started = await cli.waitForEvent('api.started');
    assert.is(started.port, port);
    assert.ok((started.plugins as string[]).includes('fine'));
    const res = await fetch(`http://127.0.0.1:${port}/fine`);
    assert.equal(await res.json(), { fine: true });
  } finally {
    cli.child.kill('SIGTERM');
  }
  assert.is(await cli.exited(), 0);
});

test.run();
