import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { parse } from 'yaml';
import { shape } from '../support/harness.js';

const test = suite(`compose.yaml (${shape})`);
type Service = { healthcheck?: { test: string[] }; command?: string[]; environment?: Record<string, string>; depends_on?: unknown };
const compose = parse(readFileSync(fileURLToPath(new URL('../../../compose.yaml', import.meta.url)), 'utf8')) as { services: Record<string, Service> };

test('svc, sandbox, egress, PostgreSQL and Redis, each with a health check', () => {
  assert.equal(Object.keys(compose.services).sort(), ['egress', 'postgres', 'redis', 'sandbox', 'svc']);
  for (const [name, s] of Object.entries(compose.services)) assert.ok(s.healthcheck?.test.length, `${name} has a health check`);
  assert.equal(compose.services.sandbox!.command, ['node', 'dist/bin/svc.js', 'sandbox']);
  assert.equal(compose.services.egress!.command, ['node', 'dist/bin/svc.js', 'egress']);
});

test('svc waits for its database and cache only, and shares each secret with the service that checks it', () => {
  assert.equal(Object.keys(compose.services.svc!.depends_on as object).sort(), ['postgres', 'redis']);
  const env = (n: string): Record<string, string> => compose.services[n]!.environment!;
  assert.is(env('svc').SVC_SANDBOX_SECRET, env('sandbox').SVC_SANDBOX_SECRET);
  assert.is(env('svc').SVC_EGRESS_SECRET, env('egress').SVC_EGRESS_SECRET);
  assert.is(env('svc').SVC_SANDBOX_URL, 'http://sandbox:7070');
  assert.is(env('sandbox').SVC_SANDBOX_EGRESS, 'egress:3128');
});

test.run();
