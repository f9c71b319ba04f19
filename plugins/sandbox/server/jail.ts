import { dirname } from 'node:path';
import type { SandboxSettings } from './settings.js';

/** Where a call's own files are on the host. */
export interface CallPaths {
  scratch: string;
  egressSocket: string;
  launcher: string;
}

/** The system folders every call sees read-only (missing ones are skipped). */
const systemDirs = ['/usr', '/bin', '/sbin', '/lib', '/lib32', '/lib64', '/etc/ssl/certs', '/etc/ca-certificates', '/etc/alternatives'];

/**
 * The bubblewrap command line for one call: new user, PID, IPC, UTS, cgroup and network
 * namespaces (the network one has only loopback), no capabilities, a read-only view of the system
 * folders, the runtime and the configured tool folders, a writable /scratch (also HOME and TMPDIR),
 * a fresh /proc and a minimal /dev, a cleared environment, and the process killed with the sandbox.
 * The root of the view is bubblewrap's own read-only tmpfs, so nothing else is writable.
 */
export function bwrapArgs(s: SandboxSettings, paths: CallPaths, command: string, args: readonly string[], env: Readonly<Record<string, string>>): string[] {
  const runtimeDir = dirname(dirname(s.runtime));
  const out = ['--unshare-all', '--die-with-parent', '--new-session', '--uid', '65534', '--gid', '65534', '--hostname', 'sandbox', '--cap-drop', 'ALL'];
  for (const d of systemDirs) out.push('--ro-bind-try', d, d);
  for (const d of new Set([runtimeDir, ...s.readOnly, ...Object.values(s.commands).map((c) => dirname(c))])) out.push('--ro-bind', d, d);
  out.push('--proc', '/proc', '--dev', '/dev');
  out.push('--bind', paths.scratch, '/scratch', '--chdir', '/scratch');
  out.push('--dir', '/run/svc', '--ro-bind', paths.launcher, '/run/svc/launcher.js', '--bind', paths.egressSocket, '/run/svc/egress.sock');
  // bubblewrap's root tmpfs stays writable unless remounted; after this only /scratch (and /dev's own tmpfs) can be written.
  out.push('--remount-ro', '/');
  out.push('--clearenv');
  const proxy = 'http://127.0.0.1:3128';
  const base: Record<string, string> = {
    ...env,
    PATH: [...new Set(Object.values(s.commands).map((c) => dirname(c))), '/usr/local/bin', '/usr/bin', '/bin'].join(':'),
    HOME: '/scratch',
    TMPDIR: '/scratch',
    HTTP_PROXY: proxy, HTTPS_PROXY: proxy, http_proxy: proxy, https_proxy: proxy,
    npm_config_cache: '/scratch/.npm', npm_config_update_notifier: 'false',
  };
  for (const [k, v] of Object.entries(base)) out.push('--setenv', k, v);
  out.push('--', s.runtime, '/run/svc/launcher.js', command, ...args);
  return out;
}
