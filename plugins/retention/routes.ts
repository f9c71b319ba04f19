import { GatewayError, Type, type AdminApi } from '../../kernel/index.js';
import type { RetentionJob } from './job.js';

const Days = Type.Union([Type.Integer({ minimum: 1 }), Type.Null()]);

const Run = Type.Object({
  id: Type.String(),
  trigger: Type.String(),
  started_at: Type.String(),
  duration_ms: Type.Integer(),
  status: Type.String(),
  counts: Type.Record(Type.String(), Type.Integer(), { description: 'Rows deleted per kind; -1 where that kind failed' }),
});

const View = Type.Object({
  schedule: Type.String(),
  kinds: Type.Array(
    Type.Object({
      kind: Type.String(),
      summary: Type.String(),
      days: Type.Union([Type.Integer(), Type.Null(), Type.Literal('expired')]),
      default_days: Type.Union([Type.Integer(), Type.Null(), Type.Literal('expired')]),
      min_days: Type.Integer(),
      max_days: Type.Integer(),
      per_workspace: Type.Boolean(),
    }),
  ),
  last_run: Type.Union([Run, Type.Null()]),
  trace_export: Type.Object({ enabled: Type.Boolean(), host: Type.Union([Type.String(), Type.Null()]) }),
});

/** Where traces go, host only: the path and headers may carry tokens. */
export function exportHost(endpoint: string | undefined): string | null {
  if (!endpoint) return null;
  try {
    return new URL(endpoint).host;
  } catch {
    return null;
  }
}

/** The Retention page's API (instance admins): periods, Run now, last run, trace export. */
export function retentionRoutes(admin: AdminApi, job: RetentionJob, schedule: string, otlpEndpoint: string | undefined): void {
  const view = async () => {
    const set = await job.periods();
    return {
      schedule: `${schedule} (UTC)`,
      kinds: job.kinds().map((k) => ({
        kind: k.kind,
        summary: k.summary,
        days: job.daysOf(k, set),
        default_days: k.defaultDays,
        min_days: k.minDays ?? 1,
        max_days: k.maxDays ?? 3650,
        per_workspace: Boolean(k.workspacePeriods),
      })),
      last_run: await job.lastRun(),
      trace_export: { enabled: Boolean(exportHost(otlpEndpoint)), host: exportHost(otlpEndpoint) },
    };
  };
  admin.route({ method: 'GET', path: '/retention', summary: 'Retention periods, last run and trace export', tag: 'retention', access: 'instance-admin', response: View, handler: view });

  admin.route({
    method: 'PUT',
    path: '/retention/periods',
    summary: 'Set retention periods in days (null: keep until deleted, where the kind allows it)',
    tag: 'retention',
    access: 'instance-admin',
    body: Type.Object({ periods: Type.Record(Type.String(), Days) }, { additionalProperties: false }),
    response: View,
    async handler({ body }) {
      const kinds = new Map(job.kinds().map((k) => [k.kind, k]));
      for (const [name, days] of Object.entries(body.periods)) {
        const kind = kinds.get(name);
        const param = `periods.${name}`;
        if (!kind) throw new GatewayError('invalid_request', `No retention kind ${name}.`, { param });
        if (kind.defaultDays === 'expired') throw new GatewayError('invalid_request', `${name} are removed at the next run once expired; they have no period.`, { param });
        if (days === null && kind.defaultDays !== null) throw new GatewayError('invalid_request', `${name} must have a period.`, { param });
        const [min, max] = [kind.minDays ?? 1, kind.maxDays ?? 3650];
        if (days !== null && (days < min || days > max)) throw new GatewayError('invalid_request', `${name}: the period is ${min} to ${max} days.`, { param });
      }
      for (const [name, days] of Object.entries(body.periods)) await job.setPeriod(name, days);
      return view();
    },
  });

  admin.route({
    method: 'POST',
    path: '/retention/runs',
    summary: 'Run now: runs the retention job at once and returns its counts',
    tag: 'retention',
    access: 'instance-admin',
    response: Type.Object({ run: Type.Union([Run, Type.Null()]), running_elsewhere: Type.Boolean() }),
    async handler() {
      const run = await job.run({ trigger: 'manual' });
      return { run, running_elsewhere: run === null };
    },
  });
}
