import { GatewayError, Type, type AdminApi } from '../../kernel/index.js';
import { egressHost, type EgressAllowList } from './egress-list.js';

const tag = 'sandbox';
const Entry = Type.Object({
  host: Type.String(), port: Type.Integer(),
  allow_private: Type.Boolean({ description: 'May reach private, loopback or link-local addresses (refused otherwise, also after DNS)' }),
});
const Push = Type.Union([Type.Literal('ok'), Type.Literal('failed'), Type.Literal('not_configured'), Type.Literal('pending')], {
  description: 'Whether the egress proxy holds this list, as this replica last pushed it (retried every minute)',
});

/** The egress allow-list for command-line tool servers: instance admins only. */
export function egressRoutes(admin: AdminApi, list: EgressAllowList): void {
  admin.route({
    method: 'GET', path: '/egress-allow-list', summary: 'Hosts command-line tool servers may reach through the egress proxy', tag, access: 'instance-admin',
    response: Type.Object({ data: Type.Array(Entry), push: Push }),
    handler: async () => ({ data: (await list.entries()).map((e) => ({ host: e.host, port: e.port, allow_private: e.allowPrivate === true })), push: list.state }),
  });
  admin.route({
    method: 'POST', path: '/egress-allow-list', summary: 'Allow a host:port through the egress proxy (or change allow_private)', tag, access: 'instance-admin', status: 201,
    body: Type.Object({ host: Type.String({ maxLength: 260 }), port: Type.Integer({ minimum: 1, maximum: 65535 }), allow_private: Type.Optional(Type.Boolean()) }),
    response: Type.Object({ ...Entry.properties, push: Push }),
    handler: async ({ body }) => {
      const entry = { host: egressHost(body.host), port: body.port, allowPrivate: body.allow_private === true };
      await list.add(entry);
      return { host: entry.host, port: entry.port, allow_private: entry.allowPrivate, push: list.state };
    },
  });
  admin.route({
    method: 'DELETE', path: '/egress-allow-list', summary: 'Stop allowing a host:port through the egress proxy', tag, access: 'instance-admin', status: 204,
    query: Type.Object({ host: Type.String({ maxLength: 260 }), port: Type.Integer({ minimum: 1, maximum: 65535 }) }),
    response: Type.Null(),
    handler: async ({ query }) => {
      if (!(await list.remove(egressHost(query.host), query.port))) throw new GatewayError('not_found', 'This host:port is not on the egress allow-list.', { param: 'host' });
      return null;
    },
  });
}
