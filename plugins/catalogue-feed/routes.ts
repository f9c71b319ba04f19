import type { KeyObject } from 'node:crypto';
import { GatewayError, Type, type AdminApi, type CatalogueFeedCheck, type SnapshotSync } from '../../kernel/index.js';
import { checkAdminUrl } from './config.js';
import type { FeedService } from './feed.js';
import type { FeedState, StateRepo } from './state.js';

const tag = 'catalogue-feed';
const access = 'instance-admin' as const;
const Time = Type.String({ format: 'date-time' });

const CheckView = Type.Object({
  at: Time,
  outcome: Type.Union([Type.Literal('applied'), Type.Literal('unchanged'), Type.Literal('failed')]),
  error_code: Type.Union([Type.String(), Type.Null()]),
  sequence: Type.Union([Type.Integer(), Type.Null()]),
});

const StatusView = Type.Object({
  on: Type.Boolean(),
  source: Type.Union([Type.Literal('config'), Type.Literal('admin'), Type.Null()], { description: 'Where the URL in force comes from (the admin\'s setting wins)' }),
  url: Type.Union([Type.String(), Type.Null()], { description: 'The URL in force; null while off' }),
  public_keys: Type.Integer({ description: 'How many public keys are pinned in config' }),
  interval_ms: Type.Integer(),
  last_check: Type.Union([CheckView, Type.Null()]),
  applied: Type.Union([Type.Object({ sequence: Type.Integer(), issued_at: Time, applied_at: Time }), Type.Null()]),
});

const checkView = (c: CatalogueFeedCheck | null) =>
  c && { at: c.at.toISOString(), outcome: c.outcome, error_code: c.errorCode, sequence: c.sequence };

export interface RouteDeps {
  feed: FeedService;
  repo: StateRepo;
  sync: SnapshotSync<FeedState>;
  keys: KeyObject[];
  intervalMs: number;
}

/** Instance admins' view and switch of price updates, under /admin/v1/catalogue-feed. */
export function feedRoutes(admin: AdminApi, d: RouteDeps): void {
  const view = () => {
    const s = d.feed.status();
    return {
      on: s.on,
      source: s.source,
      url: s.on ? d.feed.url() : null,
      public_keys: d.keys.length,
      interval_ms: d.intervalMs,
      last_check: checkView(s.lastCheck),
      applied: s.applied && { sequence: s.applied.sequence, issued_at: s.applied.issuedAt, applied_at: s.applied.appliedAt.toISOString() },
    };
  };

  admin.route({
    method: 'GET', path: '/catalogue-feed', summary: 'Whether price updates are on, the last check and the list applied', tag, access,
    response: StatusView,
    handler: () => view(),
  });

  admin.route({
    method: 'PUT', path: '/catalogue-feed', summary: 'Turn price updates on (a URL), off (""), or back to the config (null)', tag, access,
    body: Type.Object({ url: Type.Union([Type.String({ maxLength: 2000 }), Type.Null()]) }),
    response: StatusView,
    handler: async ({ body }) => {
      const url = body.url === null ? undefined : body.url.trim();
      if (url) checkAdminUrl(url, d.keys);
      await d.repo.saveAdminUrl(url, new Date());
      await d.sync.changed();
      // Turning it on checks at once, so the admin sees whether the URL and its signature work.
      if (d.feed.url() !== '') await d.feed.checkNow();
      return view();
    },
  });

  admin.route({
    method: 'POST', path: '/catalogue-feed/check', summary: 'Check the feed now', tag, access,
    response: StatusView,
    handler: async () => {
      if (d.feed.url() === '') throw new GatewayError('invalid_request', 'Price updates are off: set a feed URL first.', { param: 'url' });
      await d.feed.checkNow();
      return view();
    },
  });
}
