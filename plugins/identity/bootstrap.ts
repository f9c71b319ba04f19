import { readFile } from 'node:fs/promises';
import type { Plugin, PluginContext } from '../../kernel/index.js';
import type { IdentityConfig, IdentityConfigSchema } from './config.js';
import { audit, checkEmail, type Deps } from './deps.js';
import { insertPerson, instanceAdminExists, isUniqueViolation, personByEmail, type PersonRecord } from './db-persons.js';
import { hashPassword } from './secrets.js';

/** kernel/index.ts does not export PluginCommand itself; this is the same type. */
type PluginCommand = NonNullable<Plugin<typeof IdentityConfigSchema>['commands']>[number];
type BootDeps = Pick<Deps, 'store' | 'sync' | 'config' | 'log'>;

/**
 * Checks an admin's email and password before anything is written; the message names where the
 * value came from (a flag or a variable), never the value.
 */
function validate(email: string, password: string, min: number, source: { email: string; password: string }): string {
  let address: string;
  try {
    address = checkEmail(email);
  } catch {
    throw new Error(`${source.email} is not a valid email address`);
  }
  if (password.length < min) throw new Error(`${source.password} must be at least ${min} characters long`);
  if (password.length > 1024) throw new Error(`${source.password} must be at most 1024 characters long`);
  return address;
}

/** Creates an instance admin; throws a plain Error (for the command line) when the email is taken. */
async function createAdmin(d: BootDeps, address: string, password: string, via: string): Promise<PersonRecord> {
  const taken = () => new Error(`${via}: a person with that email already exists`);
  if (await personByEmail(d.store, address)) throw taken();
  const person = await insertPerson(d.store, { email: address, name: null, passwordHash: await hashPassword(password), instanceAdmin: true }).catch((err: unknown) => {
    throw isUniqueViolation(err) ? taken() : err;
  });
  await d.sync.changed();
  audit(d.log, 'admin_bootstrapped', null, person.id);
  return person;
}

/**
 * SVC_ADMIN_EMAIL + SVC_ADMIN_PASSWORD create the first instance admin at start, only while the
 * instance has none; afterwards they are ignored (and may be removed from the environment).
 */
export async function bootstrapFromEnv(d: BootDeps, env: NodeJS.ProcessEnv): Promise<void> {
  const email = env.SVC_ADMIN_EMAIL;
  const password = env.SVC_ADMIN_PASSWORD;
  if (!email || !password) return;
  if (await instanceAdminExists(d.store)) {
    d.log.debug('identity.bootstrap_skipped', { reason: 'admin_exists' });
    return;
  }
  const address = validate(email, password, d.config.minPasswordLength, { email: 'SVC_ADMIN_EMAIL', password: 'SVC_ADMIN_PASSWORD' });
  try {
    await createAdmin(d, address, password, 'SVC_ADMIN_EMAIL');
  } catch (err) {
    // Another replica starting at the same moment may have won the race.
    if (!/already exists/.test((err as Error).message)) throw err;
    d.log.warn('identity.bootstrap_skipped', { reason: 'email_taken' });
  }
}

/** `--name value` or `--name=value`. */
function flag(args: string[], name: string): string | undefined {
  for (let i = 0; i < args.length; i++) {
    const a = args[i]!;
    if (a === `--${name}`) return args[i + 1];
    if (a.startsWith(`--${name}=`)) return a.slice(name.length + 3);
  }
  return undefined;
}

const usage = 'usage: svc admin create-admin --email <email> --password-file <file>';

/**
 * `svc admin create-admin --email E --password-file F`: the password is read from a file (never
 * from the command line, where `ps` and shell history would show it), less one trailing newline.
 */
export function createAdminCommand(deps: (ctx: PluginContext<IdentityConfig>) => BootDeps): PluginCommand {
  return {
    name: 'admin create-admin',
    summary: 'Create an instance admin (--email E --password-file F)',
    usage: usage.slice('usage: '.length),
    async run(ctx, args, out) {
      const email = flag(args, 'email');
      const file = flag(args, 'password-file');
      if (!email || !file) throw new Error(usage);
      let password: string;
      try {
        password = (await readFile(file, 'utf8')).replace(/\r?\n$/, '');
      } catch (err) {
        throw new Error(`cannot read the password file: ${(err as NodeJS.ErrnoException).code ?? 'error'}`);
      }
      const d = deps(ctx);
      const address = validate(email, password, d.config.minPasswordLength, { email: '--email', password: 'the password in --password-file' });
      const person = await createAdmin(d, address, password, 'create-admin');
      out.write(`created instance admin ${person.id}\n`);
    },
  };
}
