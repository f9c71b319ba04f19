import { GatewayError, Type, type AdminApi } from '../../kernel/index.js';
import type { CatalogCore } from './core.js';
import { splitModelName } from './names.js';
import { parsePrice } from './prices.js';
import type { ModelRow } from './repo.js';
import { modelView, ModelView } from './views.js';
import { fromBody, ModelDeadlines } from './deadlines.js';

const tag = 'catalog';
const access = 'instance-admin' as const;

// Number with multipleOf 1 rather than Integer: the admin API's conversion would silently truncate 2.5 to 2 for an Integer.
const Tokens = (description: string) => Type.Number({ multipleOf: 1, minimum: 1, maximum: 100_000_000, description });
const Price = Type.Union([Type.Number(), Type.String()], { description: 'US dollars per million tokens: 2.5 or "2.50"; at most 6 decimals' });

const fields = {
  display_name: Type.Optional(Type.String({ maxLength: 200, description: 'Shown in the model picker; made from the model id when empty' })),
  context_window: Tokens('Integer tokens the model runs with'),
  output_limit: Tokens('Integer tokens, at most the context window; sent when a request sets no limit'),
  input_price: Price,
  output_price: Price,
  can_read_images: Type.Optional(Type.Boolean()),
  can_read_pdf: Type.Optional(Type.Boolean()),
  can_call_tools: Type.Optional(Type.Boolean()),
  deadlines: Type.Optional(ModelDeadlines),
};

const AddModel = Type.Object({ name: Type.String({ description: '<provider>:<provider\'s own model id>, id exactly as the provider gives it' }), ...fields });
const EditModel = Type.Partial(Type.Object({ name: Type.String(), ...fields }));

function notFound(name: string): GatewayError {
  return new GatewayError('not_found', `No model named "${name}".`);
}

/** The output limit must fit the context window; the field the admin sent is the one at fault. */
function checkLimits(m: Pick<ModelRow, 'contextWindow' | 'outputLimit'>, sentOutputLimit: boolean): void {
  if (m.outputLimit <= m.contextWindow) return;
  const param = sentOutputLimit ? 'output_limit' : 'context_window';
  throw new GatewayError('invalid_request', `${param}: the output limit (${m.outputLimit}) must not exceed the context window (${m.contextWindow}).`, { param });
}

const displayName = (given: string | undefined, id: string): string => given?.trim() || id;

/**
 * Admin endpoints for models (SPEC.md "Model", pricing and removal rules); instance admins only.
 * A model is addressed by its URL-encoded name in one path segment: `/models/local%3Allama3%3A8b`.
 */
export function modelRoutes(admin: AdminApi, core: CatalogCore): void {
  const { repo } = core;

  const load = async (name: string): Promise<ModelRow> => {
    const row = await repo.model(name);
    if (!row) throw notFound(name);
    return row;
  };
  const view = async (m: ModelRow) => modelView(m, (await repo.provider(m.provider)) !== undefined);

  admin.route({
    method: 'GET', path: '/models', summary: 'List added models', tag, access,
    query: Type.Object({ provider: Type.Optional(Type.String()) }),
    response: Type.Object({ data: Type.Array(ModelView) }),
    handler: async ({ query }) => {
      const providers = new Set((await repo.providers()).map((p) => p.name));
      return { data: (await repo.models(query.provider || undefined)).map((m) => modelView(m, providers.has(m.provider))) };
    },
  });

  admin.route({
    method: 'GET', path: '/models/:name', summary: 'Get an added model (name URL-encoded)', tag, access,
    response: ModelView,
    handler: async ({ params }) => view(await load(params.name!)),
  });

  admin.route({
    method: 'POST', path: '/models', summary: 'Add a model with its limits and prices', tag, access, status: 201,
    body: AddModel,
    response: ModelView,
    handler: async ({ body }) => {
      const { provider, id } = splitModelName(body.name);
      if (core.snapshot.builtIns.has(provider)) {
        throw new GatewayError('invalid_request', `name: "${provider}" is a built-in provider; its models come with the price catalogue (GET /admin/v1/built-in-models), where they can be hidden or re-priced.`, { param: 'name' });
      }
      if (!(await repo.provider(provider))) {
        throw new GatewayError('invalid_request', `name: no provider named "${provider}"; add the provider first.`, { param: 'name' });
      }
      const model = {
        name: body.name,
        provider,
        upstreamId: id,
        displayName: displayName(body.display_name, id),
        contextWindow: body.context_window,
        outputLimit: body.output_limit,
        inputMicroUsdPerMTok: parsePrice(body.input_price, 'input_price'),
        outputMicroUsdPerMTok: parsePrice(body.output_price, 'output_price'),
        canReadImages: body.can_read_images ?? false,
        canReadPdf: body.can_read_pdf ?? false,
        canCallTools: body.can_call_tools ?? false,
        deadlines: fromBody(body.deadlines),
      };
      checkLimits(model, true);
      if (!(await repo.insertModel(model, new Date()))) {
        throw new GatewayError('invalid_request', `name: a model named "${body.name}" exists already.`, { param: 'name' });
      }
      await core.changed();
      return view(await load(body.name));
    },
  });

  admin.route({
    method: 'PATCH', path: '/models/:name', summary: 'Edit a model: everything but its name', tag, access,
    body: EditModel,
    response: ModelView,
    handler: async ({ params, body }) => {
      const row = await load(params.name!);
      if (body.name !== undefined && body.name !== row.name) {
        throw new GatewayError('invalid_request', 'name: a model cannot be renamed; add it again under the new name, repoint routes, then remove the old one.', { param: 'name' });
      }
      const next: ModelRow = {
        ...row,
        displayName: body.display_name === undefined ? row.displayName : displayName(body.display_name, row.upstreamId),
        contextWindow: body.context_window ?? row.contextWindow,
        outputLimit: body.output_limit ?? row.outputLimit,
        inputMicroUsdPerMTok: body.input_price === undefined ? row.inputMicroUsdPerMTok : parsePrice(body.input_price, 'input_price'),
        outputMicroUsdPerMTok: body.output_price === undefined ? row.outputMicroUsdPerMTok : parsePrice(body.output_price, 'output_price'),
        canReadImages: body.can_read_images ?? row.canReadImages,
        canReadPdf: body.can_read_pdf ?? row.canReadPdf,
        canCallTools: body.can_call_tools ?? row.canCallTools,
        deadlines: body.deadlines === undefined ? row.deadlines : fromBody(body.deadlines),
      };
      checkLimits(next, body.output_limit !== undefined);
      await repo.updateModel(next, new Date());
      await core.changed();
      return view(await load(row.name));
    },
  });

  admin.route({
    method: 'DELETE', path: '/models/:name', summary: 'Remove a model (send ?confirm=<model name>)', tag, access,
    query: Type.Object({ confirm: Type.Optional(Type.String({ description: 'Must equal the model name' })) }),
    response: Type.Object({ name: Type.String(), removed: Type.Boolean() }),
    handler: async ({ params, query }) => {
      const row = await load(params.name!);
      if (query.confirm !== row.name) {
        throw new GatewayError('invalid_request', 'confirm: routes that send to this model will need another one; send ?confirm=<model name> to go ahead.', { param: 'confirm' });
      }
      await repo.deleteModel(row.name);
      await core.changed();
      return { name: row.name, removed: true };
    },
  });
}
