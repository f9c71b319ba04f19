import { Value } from '@sinclair/typebox/value';
import type { TSchema } from '@sinclair/typebox';
import { definePlugin, GatewayError, IdentityToken, AdminApiToken, AuditToken, type AdminRouteDef, type AuditNote, sendJson, checkCsrf } from '../../kernel/index.js';
import { version } from '../../kernel/lifecycle/service.js';
import { buildOpenApi } from './openapi.js';
import { checkAccess } from './access.js';
import { recordRequest } from './audit.js';

/** The body limit of routes that need no sign-in. */
const publicBodyBytes = 64 * 1024;

/** Validates `value` against `schema`; the first problem becomes 400 invalid_request naming the field. */
function check<S extends TSchema>(schema: S | undefined, value: unknown, where: 'body' | 'query'): unknown {
  if (!schema) return undefined;
  // Query strings need converting ("5" → 5); JSON bodies are already typed, and converting them
  // would silently truncate 2.5 to 2 for an integer field instead of refusing it.
  const filled = Value.Default(schema, value);
  const converted = where === 'query' ? Value.Convert(schema, filled) : filled;
  const first = Value.Errors(schema, converted).First();
  if (first) {
    const field = first.path.split('/').filter(Boolean).join('.');
    throw new GatewayError('invalid_request', `${field || where}: ${first.message}`, { param: field || where });
  }
  return converted;
}

/**
 * The admin API framework under /admin/v1: route declarations with typebox schemas, access
 * checks, and the OpenAPI document. Concern plugins (identity, catalog, budgets, …) add routes.
 */
export default definePlugin({
  name: 'admin-api',
  register(ctx) {
    const routes: AdminRouteDef[] = [];
    let openapi: string | undefined;
    ctx.provide(AdminApiToken, {
      route(def) {
        routes.push(def as unknown as AdminRouteDef);
        openapi = undefined;
        ctx.route(def.method, `/admin/v1${def.path}`, async (rc) => {
          const identity = ctx.optional(IdentityToken);
          // Public routes (sign-in, reset) act on no session, so only signed-in routes need the header.
          if (def.access !== 'public') checkCsrf(def.method, rc.req.headers);
          const caller = identity?.caller(rc.req.headers) ?? null;
          checkAccess(def.access, caller, rc.params, identity);
          // Routes anyone may call (sign-in, password reset) take small bodies: no 32 MB for strangers.
          const raw = def.body ? await rc.readJson(def.access === 'public' ? publicBodyBytes : undefined) : undefined;
          if (def.body && (typeof raw !== 'object' || raw === null || Array.isArray(raw))) {
            throw new GatewayError('invalid_request', 'The request body must be a JSON object.', { param: 'body' });
          }
          const body = check(def.body, raw, 'body') as never;
          const query = check(def.query, Object.fromEntries(rc.query), 'query') as never;
          // The one place changes are audited (issue 30): after the handler, whatever it was.
          const note: AuditNote = {};
          const audit = (outcome: { result?: unknown; error?: unknown }) => recordRequest(ctx.optional(AuditToken), def as unknown as AdminRouteDef, rc, caller, rc.params, body, note, outcome);
          let result: unknown;
          try {
            result = await def.handler({ caller, params: rc.params, body, query, rc, note: (extra) => Object.assign(note, extra) });
          } catch (error) {
            // Refusals of a throttled sign-in are not recorded one by one: a flood would fill the log.
            if ((error as { code?: string }).code !== 'rate_limited') await audit({ error });
            throw error;
          }
          await audit({ result });
          if (rc.res.headersSent) return;
          if (def.status === 204) {
            rc.res.statusCode = 204;
            rc.res.end();
            return;
          }
          sendJson(rc.res, def.status ?? 200, result, { 'cache-control': 'no-store' });
        });
      },
    });
    ctx.route('GET', '/admin/v1/openapi.json', (rc) => {
      openapi ??= JSON.stringify(buildOpenApi(routes, version));
      rc.res.setHeader('content-type', 'application/json');
      rc.res.end(openapi);
    });
  },
});
