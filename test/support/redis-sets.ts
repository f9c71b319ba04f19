/**
 * Throw-away Redis deployments on side ports for tests: a 3-master Cluster and a Sentinel set
 * (master, replica, one sentinel), run with the installed `redis-server` and torn down after.
 * Never touches the machine's shared Redis on 6379.
 */
import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import net from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { Redis } from 'ioredis';

/** True when `redis-server` can be run here. */
export function haveRedisServer(): boolean {
  return spawnSync('redis-server', ['--version']).status === 0;
}

function free(port: number): Promise<boolean> {
  return new Promise((done) => {
    const s = net.createServer().once('error', () => done(false));
    s.listen(port, '127.0.0.1', () => s.close(() => done(true)));
  });
}

/** `count` consecutive free ports whose cluster bus ports (+10000) are free too. */
async function freePorts(count: number): Promise<number[]> {
  for (let attempt = 0; attempt < 50; attempt++) {
    // Below Linux's ephemeral range (32768–60999), bus ports included: a port free when checked
    // could be taken by a client socket's ephemeral port before redis-server bound it (CI, 01:00).
    const base = 20_000 + Math.floor(Math.random() * 2_700);
    const ports = Array.from({ length: count }, (_, i) => base + i);
    const checks = await Promise.all(ports.flatMap((p) => [free(p), free(p + 10_000)]));
    if (checks.every(Boolean)) return ports;
  }
  throw new Error('no free side ports for a test Redis');
}

async function answers(port: number, check: (r: Redis) => Promise<boolean> = async (r) => (await r.ping()) === 'PONG', ms = 15_000): Promise<void> {
  const end = Date.now() + ms;
  for (;;) {
    const r = new Redis({ port, host: '127.0.0.1', lazyConnect: true, retryStrategy: () => null, maxRetriesPerRequest: 0 });
    r.on('error', () => undefined);
    const ok = await r.connect().then(() => check(r)).catch(() => false);
    r.disconnect();
    if (ok) return;
    if (Date.now() > end) throw new Error(`test Redis on ${port} did not become ready`);
    await sleep(100);
  }
}

export interface RedisSet {
  /** The URL svc is given. */
  url: string;
  ports: number[];
  stop(): Promise<void>;
}

/** Starts processes and makes sure they die with the test run, even when it crashes. */
class Processes {
  readonly dir = mkdtempSync(join(tmpdir(), 'svc-redis-'));
  private readonly children: ChildProcess[] = [];
  private readonly onExit = (): void => this.kill();

  constructor() {
    process.once('exit', this.onExit);
  }

  start(args: string[]): void {
    const child = spawn('redis-server', args, { cwd: this.dir, stdio: 'ignore' });
    child.on('error', () => undefined);
    this.children.push(child);
  }

  kill(): void {
    for (const c of this.children) if (c.exitCode === null) c.kill('SIGKILL');
  }

  async stop(): Promise<void> {
    process.off('exit', this.onExit);
    const exits = this.children.filter((c) => c.exitCode === null).map((c) => new Promise((r) => c.once('exit', r)));
    this.kill();
    await Promise.all(exits);
    rmSync(this.dir, { recursive: true, force: true });
  }
}

const common = ['--bind', '127.0.0.1', '--save', '', '--appendonly', 'no', '--protected-mode', 'no'];

/** Three masters, no replicas, slots spread by `redis-cli --cluster create`. */
export async function startCluster(): Promise<RedisSet> {
  const ports = await freePorts(3);
  const procs = new Processes();
  try {
    for (const p of ports) procs.start(['--port', String(p), '--cluster-enabled', 'yes', '--cluster-config-file', `nodes-${p}.conf`, ...common]);
    await Promise.all(ports.map((p) => answers(p)));
    const created = spawnSync('redis-cli', ['--cluster', 'create', ...ports.map((p) => `127.0.0.1:${p}`), '--cluster-yes'], { encoding: 'utf8', timeout: 30_000 });
    if (created.status !== 0) throw new Error(`redis-cli --cluster create failed: ${created.stdout}${created.stderr}`);
    await Promise.all(ports.map((p) => answers(p, async (r) => /cluster_state:ok/.test(String(await r.call('CLUSTER', 'INFO'))))));
  } catch (err) {
    await procs.stop();
    throw err;
  }
  return { url: `redis+cluster://${ports.map((p) => `127.0.0.1:${p}`).join(',')}`, ports, stop: () => procs.stop() };
}

/** A master, a replica of it and one sentinel watching them as `master`. */
export async function startSentinelSet(master = 'svcmaster'): Promise<RedisSet & { sentinelPort: number }> {
  const [primary, replica, sentinel] = (await freePorts(3)) as [number, number, number];
  const procs = new Processes();
  try {
    procs.start(['--port', String(primary), ...common]);
    procs.start(['--port', String(replica), '--replicaof', '127.0.0.1', String(primary), ...common]);
    const conf = join(procs.dir, 'sentinel.conf');
    writeFileSync(
      conf,
      [
        `port ${sentinel}`,
        'bind 127.0.0.1',
        'protected-mode no',
        `sentinel monitor ${master} 127.0.0.1 ${primary} 1`,
        `sentinel down-after-milliseconds ${master} 1000`,
        `sentinel failover-timeout ${master} 5000`,
        '',
      ].join('\n'),
    );
    procs.start([conf, '--sentinel']);
    await answers(replica, async (r) => /master_link_status:up/.test(await r.info('replication')));
    await answers(sentinel, async (r) => /num-other|flags/.test(JSON.stringify(await r.call('SENTINEL', 'REPLICAS', master))));
  } catch (err) {
    await procs.stop();
    throw err;
  }
  return { url: `redis+sentinel://127.0.0.1:${sentinel}/${master}`, ports: [primary, replica, sentinel], sentinelPort: sentinel, stop: () => procs.stop() };
}
