import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { readFileSync, readdirSync, statSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { packageRoot } from '../../kernel/paths.js';
import { errorTable } from '../../kernel/errors/table.js';
import { serviceEnvironment, serviceNodeFlags } from '../../kernel/lifecycle/node-flags.js';

/** The README's tables must stay true to the code: every SVC_* variable read, every error code. */
const test = suite('README stays true');
const readme = readFileSync(resolve(packageRoot, 'README.md'), 'utf8');

function sources(dir: string): string[] {
  return readdirSync(dir).flatMap((name) => {
    const path = join(dir, name);
    if (statSync(path).isDirectory()) return name === '__fixtures__' ? [] : sources(path);
    return path.endsWith('.ts') ? [path] : [];
  });
}

test('every SVC_* variable the service reads is in the README table', () => {
  const used = new Set<string>();
  for (const dir of ['kernel', 'plugins', 'providers', 'bin']) {
    for (const file of sources(resolve(packageRoot, dir))) {
      for (const m of readFileSync(file, 'utf8').matchAll(/\bSVC_[A-Z][A-Z0-9_]*\b/g)) used.add(m[0]);
    }
  }
  assert.ok(used.size >= 10, `found ${used.size}`);
  const missing = [...used].filter((v) => !readme.includes(`\`${v}\``));
  assert.equal(missing, []);
});

test('every error code of the table is in the README, with its HTTP status row', () => {
  for (const [code, row] of Object.entries(errorTable)) {
    const line = readme.split('\n').find((l) => l.startsWith(`| ${row.status} |`) && l.includes(code));
    assert.ok(line, `${code} (${row.status}) in the README's error table`);
    assert.ok(line!.includes(row.type), `${code}: type ${row.type}`);
  }
});

test('the node flags of kernel/lifecycle/node-flags.ts are the ones the Dockerfile and npm start pass', () => {
  const dockerCmd = readFileSync(resolve(packageRoot, 'Dockerfile'), 'utf8').split('\n').find((l) => l.startsWith('CMD '));
  const start = (JSON.parse(readFileSync(resolve(packageRoot, 'package.json'), 'utf8')) as { scripts: Record<string, string> }).scripts.start!;
  assert.ok(serviceNodeFlags.length > 0);
  for (const flag of serviceNodeFlags) {
    assert.ok(dockerCmd?.includes(`"${flag}"`), `Dockerfile CMD passes ${flag}`);
    assert.ok(start.includes(` ${flag} `), `npm start passes ${flag}`);
  }
  const dockerfile = readFileSync(resolve(packageRoot, 'Dockerfile'), 'utf8');
  for (const [k, v] of Object.entries(serviceEnvironment)) assert.ok(dockerfile.includes(`\nENV ${k}=${v}\n`), `Dockerfile sets ${k}`);
});

test.run();
