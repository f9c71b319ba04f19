import { GatewayError, Type, type SandboxStart } from '../../kernel/index.js';

/**
 * What a workspace admin registers for a command-line (stdio) server: a command the sandbox
 * allows (a name such as `node` or `npx`, looked up in the sandbox's `SVC_SANDBOX_COMMANDS`, never
 * a path or a command line), its arguments (each handed to the program as one argument, with no
 * shell, so nothing in them is expanded or run), and environment values. `secretEnv` values are
 * stored encrypted and never shown again; `env` values are shown to workspace admins.
 */
export interface StdioLaunch {
  command: string;
  args: string[];
  env: Record<string, string>;
  secretEnv: Record<string, string>;
}

/** The launch as stored and shown: secret values only by name. */
export interface StoredLaunch {
  command: string;
  args: string[];
  env: Record<string, string>;
  secretEnvNames: string[];
}

const envValues = (description: string) => Type.Record(Type.String(), Type.String({ maxLength: 8000 }), { maxProperties: 64, description });

/** Request fields of a stdio registration (routes.ts adds them to the tool-server body). */
export const stdioFields = {
  command: Type.Optional(Type.String({ pattern: '^[a-zA-Z0-9][a-zA-Z0-9._+-]{0,63}$', description: 'A command the sandbox allows (SVC_SANDBOX_COMMANDS), e.g. node or npx; stdio only' })),
  args: Type.Optional(Type.Array(Type.String({ maxLength: 4000 }), { maxItems: 64, description: 'Arguments, each passed as is (no shell); stdio only' })),
  env: Type.Optional(envValues('Environment values, shown to workspace admins; stdio only')),
  secret_env: Type.Optional(envValues('Environment values stored encrypted and never shown again; stdio only')),
};

const envName = /^[A-Za-z_][A-Za-z0-9_]{0,127}$/;
/** Names the sandbox sets for every call (its home, scratch, proxy and npm cache); a value given here would be replaced. */
const sandboxOwned = new Set(['PATH', 'HOME', 'TMPDIR', 'HTTP_PROXY', 'HTTPS_PROXY', 'http_proxy', 'https_proxy', 'npm_config_cache', 'npm_config_update_notifier']);

function checkEnv(values: Record<string, string>, param: string): void {
  for (const [name, value] of Object.entries(values)) {
    if (!envName.test(name)) throw new GatewayError('invalid_request', `${param} names are letters, digits and _ and do not start with a digit.`, { param });
    if (sandboxOwned.has(name)) throw new GatewayError('invalid_request', `${param}: ${name} is set by the sandbox for every call.`, { param });
    if (value.includes('\0')) throw new GatewayError('invalid_request', `${param} values cannot hold NUL characters.`, { param });
  }
}

/** Checks a registration body's stdio fields (typebox already checked their shapes). */
export function launchOf(body: { command?: string; args?: string[]; env?: Record<string, string>; secret_env?: Record<string, string> }): StdioLaunch {
  if (!body.command) throw new GatewayError('invalid_request', 'A stdio tool server needs a command (one the sandbox allows, e.g. node or npx).', { param: 'command' });
  const args = body.args ?? [];
  if (args.some((a) => a.includes('\0'))) throw new GatewayError('invalid_request', 'args cannot hold NUL characters.', { param: 'args' });
  const env = body.env ?? {};
  const secretEnv = body.secret_env ?? {};
  checkEnv(env, 'env');
  checkEnv(secretEnv, 'secret_env');
  if (Object.keys(secretEnv).some((n) => n in env)) throw new GatewayError('invalid_request', 'A name is in both env and secret_env.', { param: 'secret_env' });
  return { command: body.command, args, env, secretEnv };
}

/** Row columns: `env` holds the shown values and null for each secret one (its value is in the encrypted credentials). */
export function launchColumns(l: StdioLaunch): { command: string; args: string; env: string; secrets: string | null } {
  const env: Record<string, string | null> = { ...l.env };
  for (const name of Object.keys(l.secretEnv)) env[name] = null;
  return { command: l.command, args: JSON.stringify(l.args), env: JSON.stringify(env), secrets: Object.keys(l.secretEnv).length ? JSON.stringify(l.secretEnv) : null };
}

export function storedLaunch(row: { command: string | null; args: string | null; env: string | null }): StoredLaunch {
  const env = JSON.parse(row.env ?? '{}') as Record<string, string | null>;
  const shown = Object.fromEntries(Object.entries(env).filter((e): e is [string, string] => e[1] !== null));
  return { command: row.command ?? '', args: JSON.parse(row.args ?? '[]') as string[], env: shown, secretEnvNames: Object.keys(env).filter((n) => env[n] === null) };
}

/** What the sandbox starts: the stored launch with its secret values (decrypted just before use). */
export function sandboxStart(l: StoredLaunch, secrets: Record<string, string>): SandboxStart {
  return { command: l.command, args: l.args, env: { ...l.env, ...secrets } };
}
