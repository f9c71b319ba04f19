import type { TSchema } from '@sinclair/typebox';
import type { AdminRouteDef } from '../../kernel/index.js';

const errorSchema = {
  type: 'object',
  required: ['error'],
  properties: {
    error: {
      type: 'object',
      required: ['message', 'type', 'param', 'code'],
      properties: { message: { type: 'string' }, type: { type: 'string' }, param: { type: ['string', 'null'] }, code: { type: 'string' } },
    },
  },
};

/** Typebox schemas are JSON Schema already; this strips typebox's symbol keys by round-tripping. */
function plain(schema: TSchema | undefined): unknown {
  return schema === undefined ? undefined : JSON.parse(JSON.stringify(schema));
}

/** `/workspaces/:workspaceId/keys` → `/workspaces/{workspaceId}/keys`. */
function openApiPath(path: string): string {
  return path.replace(/:([A-Za-z0-9_]+)/g, '{$1}');
}

/** The OpenAPI 3.1 document, generated from the same schemas that validate requests. */
export function buildOpenApi(routes: AdminRouteDef[], version: string): Record<string, unknown> {
  const paths: Record<string, Record<string, unknown>> = {};
  for (const r of routes) {
    const path = `/admin/v1${openApiPath(r.path)}`;
    const params = [...r.path.matchAll(/:([A-Za-z0-9_]+)/g)].map((m) => ({ name: m[1], in: 'path', required: true, schema: { type: 'string' } }));
    const query = r.query ? Object.entries((plain(r.query) as { properties?: Record<string, unknown> }).properties ?? {}).map(([name, schema]) => ({ name, in: 'query', required: false, schema })) : [];
    const status = String(r.status ?? 200);
    (paths[path] ??= {})[r.method.toLowerCase()] = {
      summary: r.summary,
      tags: [r.tag],
      security: r.access === 'public' ? [] : [{ bearer: [] }, { session: [] }],
      parameters: [...params, ...query],
      ...(r.body ? { requestBody: { required: true, content: { 'application/json': { schema: plain(r.body) } } } } : {}),
      responses: {
        [status]: status === '204' ? { description: 'Done' } : { description: 'OK', content: { 'application/json': { schema: plain(r.response) } } },
        default: { description: 'Error in the spec shape', content: { 'application/json': { schema: { $ref: '#/components/schemas/Error' } } } },
      },
    };
  }
  return {
    openapi: '3.1.0',
    info: { title: 'svc admin API', version },
    paths,
    components: {
      schemas: { Error: errorSchema },
      securitySchemes: {
        bearer: { type: 'http', scheme: 'bearer', description: 'A session token from POST /admin/v1/sessions, or an svc_ key' },
        session: { type: 'apiKey', in: 'cookie', name: 'svc_session' },
      },
    },
  };
}
