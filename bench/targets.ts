import { createScaleOutBacking, type ScaleOutBacking } from './backing.js';
import { readyLine, readyPort, startNode, waitReady, type Child } from './child.js';
import { allocProbe } from './alloc.js';
import { eldProbe } from './eld.js';
import { provision, providerName } from './provision.js';
import { requestBody, upstreamIds } from './scenarios.js';
import { rssMb } from './proc.js';
import { benchRateLimit, startSvc } from './svc.js';

/** What the benchmark talks to: the upstream itself, the bare proxy, svc in each shape. */
export type TargetName = 'direct' | 'bare' | 'portkey' | 'svc-embedded' | 'svc-scale-out' | 'svc-compare';

export interface Target {
  name: TargetName;
  /** Origin; requests go to `${url}/v1/chat/completions`. */
  url: string;
  apiKey: string;
  /** The gateway process, whose CPU time and memory are measured; undefined for direct. */
  pid: number | undefined;
  /** Where its event-loop probe (eld-probe.ts) answers; undefined for direct. */
  eldFile?: string;
  /** Where its allocation probe (alloc-probe.ts) writes heap profiles; undefined for direct. */
  allocFile?: string;
  /** svc with routes: the `auto` scenario sends model `auto` to it. */
  auto?: boolean;
  /** Set when the target cannot stream through the mock: why (its streamed scenarios are skipped). */
  noStream?: string;
  /** Extra request headers (Portkey's provider and custom host). */
  headers?: Record<string, string>;
  /** The request's `model` for an upstream model id (svc names it `mock:<id>`). */
  model(upstreamId: string): string;
  /** What governance was on, in words (svc only). */
  governance?: string[];
  /** VmRSS right after start-up, before anything (routes included) was provisioned (svc only). */
  bootRssMb?: number;
  /** Where svc keeps its rows (svc only): the embedded SQLite file, or the scale-out database. */
  store?: { sqliteFile?: string; databaseUrl?: string };
  stop(): Promise<void>;
}

/** The mock upstream as a child process. */
export async function startMockProcess(logDir: string): Promise<{ child: Child; port: number }> {
  const child = startNode(['dist/bench/mock-upstream.js', '0'], process.env, `${logDir}/mock-upstream.log`);
  await waitReady(child, 'mock upstream', readyLine(child), 10_000);
  return { child, port: readyPort(child)! };
}

export function directTarget(mockPort: number): Target {
  return { name: 'direct', url: `http://127.0.0.1:${mockPort}`, apiKey: 'sk-direct', pid: undefined, model: (id) => id, stop: async () => {} };
}

export async function startBare(mockPort: number, logDir: string, nodeFlags: string[] = []): Promise<Target> {
  const apiKey = 'sk-bench-bare';
  const probe = eldProbe(logDir, 'bare');
  const alloc = allocProbe(logDir, 'bare');
  const child = startNode([...probe.flags, ...alloc.flags, ...nodeFlags, 'dist/bench/bare-proxy.js', '0', `http://127.0.0.1:${mockPort}/v1`], { ...process.env, ...probe.env, ...alloc.env, BARE_KEY: apiKey }, `${logDir}/bare-proxy.log`);
  await waitReady(child, 'bare proxy', readyLine(child), 10_000);
  const port = readyPort(child)!;
  return { name: 'bare', url: `http://127.0.0.1:${port}`, apiKey, pid: child.pid, eldFile: probe.env.BENCH_ELD_FILE, allocFile: alloc.env.BENCH_ALLOC_FILE, model: (id) => id, stop: () => child.stop() };
}

/** A plain description of the governance a running svc has on. */
function describe(plugins: string[], caps: string[], capsNote: string | undefined, fallbacks: string[], routes: string): string[] {
  const out = ['key auth (identity)'];
  out.push(plugins.includes('rate-limit') ? `per-person rate limit (rate-limit: ${benchRateLimit.requests} per ${benchRateLimit.windowSeconds} s)` : 'NO rate limit (rate-limit plugin not running)');
  if (plugins.includes('budgets')) out.push(caps.length ? `budget hold + settle against caps at ${caps.join(', ')} (budgets)` : `budgets plugin on, ${capsNote ?? 'no caps'}`);
  else out.push('NO budgets (budgets plugin not running)');
  out.push(plugins.includes('tracing') ? 'usage records + spans (tracing)' : 'NO tracing');
  out.push(routes);
  for (const f of fallbacks) out.push(`fallback: ${f}`);
  if (process.env.BENCH_SVC_CONFIG) out.push(`experiment: BENCH_SVC_CONFIG=${process.env.BENCH_SVC_CONFIG}`);
  if (process.env.BENCH_SVC_NODE_FLAGS) out.push(`experiment: BENCH_SVC_NODE_FLAGS=${process.env.BENCH_SVC_NODE_FLAGS}`);
  return out;
}

export interface SvcTargetOptions {
  shape: 'embedded' | 'scale-out';
  mockPort: number;
  logDir: string;
  upstreamIds: string[];
  nodeFlags?: string[];
  /** Run svc from another package root (an A/B build), named `svc-compare`. */
  root?: string;
  /** Config merged over the benchmark's (bench/svc.ts). */
  config?: Record<string, unknown>;
  /** Extra fields of every model added (the hostile bench's models read images and PDFs). */
  modelFields?: Record<string, unknown>;
}

/** svc in one shape, started and provisioned; scale-out gets a fresh database it drops at stop. */
export async function startSvcTarget(o: SvcTargetOptions): Promise<Target> {
  const name: TargetName = o.root ? 'svc-compare' : o.shape === 'embedded' ? 'svc-embedded' : 'svc-scale-out';
  let backing: ScaleOutBacking | undefined;
  if (o.shape === 'scale-out') backing = await createScaleOutBacking();
  try {
    const probe = eldProbe(o.logDir, name);
    const alloc = allocProbe(o.logDir, name);
    const svc = await startSvc({ backing, logDir: o.logDir, name, nodeFlags: [...probe.flags, ...alloc.flags, ...(o.nodeFlags ?? [])], env: { ...probe.env, ...alloc.env }, root: o.root, config: o.config });
    // Booted and migrated, nothing provisioned: the figure of an instance without routes.
    const bootRssMb = rssMb(svc.child.pid!);
    try {
      const p = await provision(svc.url, `http://127.0.0.1:${o.mockPort}/v1`, o.upstreamIds, o.modelFields);
      return {
        name,
        url: svc.url,
        apiKey: p.apiKey,
        pid: svc.child.pid,
        eldFile: probe.env.BENCH_ELD_FILE,
        allocFile: alloc.env.BENCH_ALLOC_FILE,
        bootRssMb,
        model: (id) => `${providerName}:${id}`,
        auto: p.routes.count > 0,
        store: backing ? { databaseUrl: backing.databaseUrl } : { sqliteFile: `${svc.dataDir}/svc.sqlite` },
        governance: describe(svc.plugins, p.caps, p.capsNote, svc.fallbacks, p.routes.count ? `${p.routes.count} routes for model \`auto\` (routing)` : `NO auto routing (${p.routes.note})`),
        stop: async () => {
          await svc.stop();
          await backing?.drop();
        },
      };
    } catch (err) {
      await svc.stop();
      throw err;
    }
  } catch (err) {
    await backing?.drop().catch(() => {});
    throw err;
  }
}

/** One whole and one streamed request must succeed before any load, or the figures mean nothing. */
export async function smokeTest(t: Target): Promise<void> {
  for (const stream of t.noStream ? [false] : [false, true]) {
    const res = await fetch(`${t.url}/v1/chat/completions`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', authorization: `Bearer ${t.apiKey}`, ...t.headers },
      body: requestBody(t.model(upstreamIds[0]!), stream),
    });
    const text = await res.text();
    if (res.status !== 200 || (stream && !text.includes('data: [DONE]'))) throw new Error(`${t.name}: ${stream ? 'streamed' : 'whole'} request → ${res.status} ${text.slice(0, 300)}`);
  }
  if (t.auto) await smokeAuto(t);
}

/** The `auto` request must succeed too; the rule it took is named in the report (a classifier that did not load is not the path users get). */
async function smokeAuto(t: Target): Promise<void> {
  // The classifier loads once a route exists (plugins/routing/README.md); a probe starts it, then wait for it.
  for (let i = 0; i < 300; i++) {
    const health = (await (await fetch(`${t.url}/healthz`)).json()) as { checks?: { classifier?: { status?: string } } };
    if (health.checks?.classifier?.status === 'ok') break;
    await new Promise((done) => setTimeout(done, 100));
  }
  const res = await fetch(`${t.url}/v1/chat/completions`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', authorization: `Bearer ${t.apiKey}` },
    body: requestBody('auto', false),
  });
  const text = await res.text();
  if (res.status !== 200) throw new Error(`${t.name}: auto request → ${res.status} ${text.slice(0, 300)}`);
  const h = (n: string) => res.headers.get(n) ?? '—';
  t.governance?.push(`auto smoke request: rule ${h('x-svc-routing-rule')} (${h('x-svc-routing-reason')}), route ${h('x-svc-route')}, confidence ${h('x-svc-routing-confidence')}`);
}
