/**
 * Runs inside every sandboxed call (bound read-only at /run/svc/launcher.js) before the tool
 * server. The call's network namespace has only loopback; this process listens on
 * 127.0.0.1:3128 there and relays each connection to /run/svc/egress.sock, a unix socket the
 * sandbox service binds in and relays to `svc egress`. So the egress proxy is the only way out,
 * and the tool server finds it through the usual HTTP_PROXY / HTTPS_PROXY variables.
 * Imports node built-ins only: nothing of the project is visible inside the sandbox.
 */
import { spawn } from 'node:child_process';
import { connect, createServer } from 'node:net';

const [command, ...args] = process.argv.slice(2);

const relay = createServer((inner) => {
  const outer = connect('/run/svc/egress.sock');
  inner.on('error', () => outer.destroy());
  outer.on('error', () => inner.destroy());
  inner.pipe(outer).pipe(inner);
});

relay.listen(3128, '127.0.0.1', () => {
  const child = spawn(command!, args, { stdio: 'inherit' });
  child.on('error', () => process.exit(127));
  child.on('exit', (code, signal) => process.exit(code ?? (signal ? 128 : 1)));
});
relay.on('error', () => process.exit(126));
