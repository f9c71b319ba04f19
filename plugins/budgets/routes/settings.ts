import { webhookSecretContext } from '../snapshot.js';
import { GatewayError, Type } from '../../../kernel/index.js';
import type { RouteDeps } from './deps.js';

const tag = 'budgets';
const WorkspaceSettings = Type.Object({
  fallback_model: Type.Union([Type.String(), Type.Null()], { description: 'Budget fallback model: tried when a cap lacks room for the chosen model and its fallbacks' }),
});
const WebhookView = Type.Object({
  configured: Type.Boolean(),
  /** Only the host: the address may carry a token of its own. */
  host: Type.Union([Type.String(), Type.Null()]),
  has_secret: Type.Boolean(),
});
const WebhookBody = Type.Object({
  url: Type.Union([Type.String({ pattern: '^https?://', maxLength: 2000 }), Type.Null()]),
  secret: Type.Optional(Type.String({ minLength: 16, maxLength: 500 })),
});
const AlertView = Type.Object({
  id: Type.String(),
  cap_id: Type.String(),
  scope: Type.String(),
  scope_id: Type.String(),
  period: Type.String(),
  period_key: Type.String(),
  threshold_percent: Type.Integer(),
  amount_micro_usd: Type.Integer(),
  spent_micro_usd: Type.Integer(),
  state: Type.String({ description: 'pending, sent, given_up, or recorded (no webhook set)' }),
  attempts: Type.Integer(),
  created_at: Type.String(),
});

async function upsertSetting(d: RouteDeps, workspaceId: string, column: 'fallback_model' | 'webhook', values: Array<string | null>): Promise<void> {
  const now = Date.now();
  if (column === 'fallback_model') {
    await d.store.execute(
      'insert into budget_settings (workspace_id, fallback_model, updated_at) values (?,?,?) on conflict (workspace_id) do update set fallback_model = excluded.fallback_model, updated_at = excluded.updated_at',
      [workspaceId, values[0], now],
    );
  } else {
    await d.store.execute(
      'insert into budget_settings (workspace_id, webhook_url, webhook_secret, updated_at) values (?,?,?,?) on conflict (workspace_id) do update set webhook_url = excluded.webhook_url, webhook_secret = excluded.webhook_secret, updated_at = excluded.updated_at',
      [workspaceId, values[0], values[1], now],
    );
  }
  await d.sync.changed();
}

function webhookView(w: { url: string; secret: string | null } | null) {
  return { configured: w !== null, host: w ? new URL(w.url).host : null, has_secret: Boolean(w?.secret) };
}

/** The workspace's budget fallback model; the instance's alert webhook and its alerts. */
export function settingRoutes(d: RouteDeps): void {
  const wsAccess = { workspace: 'admin' as const, param: 'workspaceId' };
  d.admin.route({
    method: 'GET', path: '/workspaces/:workspaceId/budget-settings', summary: "A workspace's budget settings", tag, access: wsAccess, response: WorkspaceSettings,
    handler: ({ params }) => ({ fallback_model: d.sync.current.fallbackModel.get(params.workspaceId!) ?? null }),
  });
  d.admin.route({
    method: 'PUT', path: '/workspaces/:workspaceId/budget-settings', summary: 'Set the budget fallback model (null clears it)', tag, access: wsAccess, body: WorkspaceSettings, response: WorkspaceSettings,
    handler: async ({ params, body }) => {
      const name = body.fallback_model;
      const m = name === null ? undefined : d.catalog.model(name);
      if (name !== null && (!m || m.inputMicroUsdPerMTok === null || m.outputMicroUsdPerMTok === null)) {
        throw new GatewayError('invalid_request', 'fallback_model must name an added model with a price.', { param: 'fallback_model' });
      }
      await upsertSetting(d, params.workspaceId!, 'fallback_model', [name]);
      return { fallback_model: name };
    },
  });
  d.admin.route({
    method: 'GET', path: '/budget-alert-webhook', summary: 'The alert webhook (its address and secret are never shown)', tag, access: 'instance-admin', response: WebhookView,
    handler: () => webhookView(d.sync.current.webhook),
  });
  d.admin.route({
    method: 'PUT', path: '/budget-alert-webhook', summary: 'Set the alert webhook and its HMAC secret (url null removes it)', tag, access: 'instance-admin', body: WebhookBody, response: WebhookView,
    handler: async ({ body }) => {
      // A new secret is stored encrypted; none given keeps the stored one.
      const secret = body.url === null ? null : body.secret !== undefined ? d.vault.encrypt(body.secret, webhookSecretContext) : (d.sync.current.webhook?.secret ?? null);
      await upsertSetting(d, '*', 'webhook', [body.url, secret]);
      return webhookView(d.sync.current.webhook);
    },
  });
  d.admin.route({
    method: 'GET', path: '/budget-alerts', summary: 'Budget alerts, newest first', tag, access: 'instance-admin',
    query: Type.Object({ limit: Type.Integer({ minimum: 1, maximum: 1000, default: 100 }) }),
    response: Type.Object({ data: Type.Array(AlertView) }),
    handler: async ({ query }) => {
      const rows = await d.store.execute<Record<string, string | number>>('select * from budget_alerts order by created_at desc, id limit ?', [query.limit]);
      return {
        data: rows.map((r) => ({
          id: String(r.id), cap_id: String(r.cap_id), scope: String(r.scope), scope_id: String(r.scope_id), period: String(r.period),
          period_key: String(r.period_key), threshold_percent: Number(r.threshold), amount_micro_usd: Number(r.amount_micro_usd),
          spent_micro_usd: Number(r.spent_micro_usd), state: String(r.state), attempts: Number(r.attempts), created_at: new Date(Number(r.created_at)).toISOString(),
        })),
      };
    },
  });
}
