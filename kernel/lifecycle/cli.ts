import { readFileSync } from 'node:fs';
import { resolve } from 'node:path';
import { pathToFileURL } from 'node:url';
import { parseArgs } from 'node:util';
import { existsSync } from 'node:fs';
import { loadConfig } from '../config/load.js';
import { modulePath } from '../plugin/load.js';
import { packageRoot } from '../paths.js';
import type { PluginCommand } from '../plugin/define.js';

/** Bad arguments to a `svc` subcommand: the command line exits 2 with the message (a usage line). */
export class UsageError extends Error {
  override name = 'UsageError';
}

export interface CommandInfo {
  name: string;
  summary: string;
  usage: string;
  options?: PluginCommand['options'];
}

export interface CliIo {
  stdout: NodeJS.WritableStream;
  stderr: NodeJS.WritableStream;
  env: NodeJS.ProcessEnv;
}

const serveInfo: CommandInfo = { name: 'serve', summary: 'Start the service (also what `svc` alone does)', usage: 'svc serve', options: {} };
/** Separate services started by the svc command itself (bin/svc.ts), each in its own container. */
const serviceInfos: CommandInfo[] = [
  { name: 'sandbox', summary: 'Start the sandbox service for command-line tool servers', usage: 'svc sandbox', options: {} },
  { name: 'egress', summary: 'Start the egress proxy for sandboxed tool servers', usage: 'svc egress', options: {} },
];

/** Read from package.json, not from the service module, so `svc --version` loads nothing else. */
export function cliVersion(): string {
  return (JSON.parse(readFileSync(resolve(packageRoot, 'package.json'), 'utf8')) as { version: string }).version;
}

/**
 * The subcommands of every enabled plugin, read from the plugins' `commands` metadata without
 * booting: no store, cache or data folder is opened. A broken config still lets help answer.
 */
export async function listCommands(env: NodeJS.ProcessEnv): Promise<{ commands: CommandInfo[]; problem?: string }> {
  const commands: CommandInfo[] = [serveInfo, ...serviceInfos];
  let problem: string | undefined;
  try {
    const { config, baseDir } = loadConfig(env);
    for (const [name, entry] of Object.entries(config.plugins)) {
      if (entry.enabled === false) continue;
      const path = modulePath(name, entry.module, baseDir);
      if (!existsSync(path)) continue;
      const mod = (await import(pathToFileURL(path).href)) as { default?: { commands?: PluginCommand[] } };
      for (const c of mod.default?.commands ?? []) commands.push({ name: c.name, summary: c.summary, usage: c.usage ?? `svc ${c.name}`, options: c.options });
    }
  } catch (err) {
    problem = (err as Error).message;
  }
  return { commands, problem };
}

function helpText(commands: CommandInfo[], problem?: string): string {
  const width = Math.max(...commands.map((c) => c.name.length)) + 2;
  const lines = commands.map((c) => `  svc ${c.name.padEnd(width)}${c.summary}`);
  return [
    `svc ${cliVersion()}: a self-hosted Chat Completions gateway`,
    '',
    'usage: svc <command> [arguments]',
    '',
    'commands:',
    ...lines,
    `  svc help <command>${' '.repeat(Math.max(1, width - 14))}Show a command's usage`,
    `  svc --version${' '.repeat(Math.max(1, width - 9))}Print the version`,
    ...(problem ? ['', `(plugin commands could not all be listed: ${problem})`] : []),
    '',
  ].join('\n');
}

/** The longest command name that prefixes `words`. */
function match(commands: CommandInfo[], words: string[]): CommandInfo | undefined {
  return commands
    .filter((c) => c.name.split(' ').every((w, i) => words[i] === w))
    .sort((a, b) => b.name.length - a.name.length)[0];
}

function commandHelp(c: CommandInfo): string {
  return `usage: ${c.usage}\n\n${c.summary}\n`;
}

/** Checks declared flags before anything boots; throws UsageError with the usage line. */
function checkArgs(c: CommandInfo, args: string[]): void {
  if (!c.options) return;
  let values: Record<string, unknown>;
  try {
    const options = Object.fromEntries(Object.entries(c.options).map(([k, o]) => [k, { type: o.type }]));
    values = parseArgs({ args, options, strict: true, allowPositionals: false }).values;
  } catch (err) {
    throw new UsageError(`${(err as Error).message.split('\n')[0]}\nusage: ${c.usage}`);
  }
  const missing = Object.entries(c.options).filter(([k, o]) => o.required && values[k] === undefined).map(([k]) => `--${k}`);
  if (missing.length) throw new UsageError(`missing ${missing.join(', ')}\nusage: ${c.usage}`);
}

function isUsage(err: unknown): boolean {
  return err instanceof UsageError || (err as Error)?.name === 'UsageError' || /^usage: /.test((err as Error)?.message ?? '');
}

/**
 * Runs `svc <words>` except `serve`: help and version answer without booting; a known command is
 * checked, then run on a booted service that does not listen. Resolves with the exit code
 * (0 done, 1 failed, 2 bad arguments or unknown command).
 */
export async function runCli(words: string[], io: CliIo): Promise<number> {
  const [first, ...rest] = words;
  if (first === '--version' || first === '-v' || first === 'version') {
    if (rest.length) return usageFail(io, 'usage: svc --version');
    io.stdout.write(`${cliVersion()}\n`);
    return 0;
  }
  const { commands, problem } = await listCommands(io.env);
  if (first === undefined || first === '--help' || first === '-h' || (first === 'help' && rest.length === 0)) {
    io.stdout.write(helpText(commands, problem));
    return 0;
  }
  if (first === 'help') {
    const c = match(commands, rest);
    if (!c || c.name.split(' ').length !== rest.length) return usageFail(io, `svc: no command "svc ${rest.join(' ')}"; see svc --help`);
    io.stdout.write(commandHelp(c));
    return 0;
  }
  const c = match(commands, words);
  if (!c) return usageFail(io, `svc: unknown command "svc ${words.join(' ')}"; see svc --help`);
  const args = words.slice(c.name.split(' ').length);
  if (args.includes('--help') || args.includes('-h')) {
    io.stdout.write(commandHelp(c));
    return 0;
  }
  try {
    checkArgs(c, args);
    // bin/svc.ts starts the service itself (signals, exit codes); here it only gets its arguments checked.
    if (c === serveInfo || serviceInfos.includes(c)) throw new Error(`svc ${c.name} is started by the svc command itself`);
    // Loaded only here: help and version never pay for the ORM, drivers or plugins' services.
    const { Service } = await import('./service.js');
    await new Service({ env: io.env, logSink: io.stderr }).runCommand(words, io.stdout);
    return 0;
  } catch (err) {
    if (isUsage(err)) return usageFail(io, (err as Error).message);
    io.stderr.write(`svc: ${(err as Error).message}\n`);
    return 1;
  }
}

function usageFail(io: CliIo, message: string): number {
  io.stderr.write(`${message}\n`);
  return 2;
}
