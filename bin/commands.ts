/**
 * Subcommands other than `serve`. Each later capability (admin tasks, diagnostics) adds its own
 * entry here; unknown commands exit non-zero with the list.
 */
const commands: Record<string, { summary: string; run: (args: string[]) => Promise<void> }> = {};

export function registerCommand(name: string, summary: string, run: (args: string[]) => Promise<void>): void {
  commands[name] = { summary, run };
}

export async function runCommand(name: string, args: string[]): Promise<void> {
  if (name === 'help' || name === '--help') {
    process.stdout.write(['usage: svc <command>', '  serve    start the service (default)', ...Object.entries(commands).map(([n, c]) => `  ${n.padEnd(8)} ${c.summary}`)].join('\n') + '\n');
    return;
  }
  const command = commands[name];
  if (!command) throw new Error(`unknown command "${name}"; run "svc help" for the list`);
  await command.run(args);
}
