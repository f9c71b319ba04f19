import { GatewayError, Type, type AdminApi, type CatalogModel } from '../../kernel/index.js';
import type { OverrideRow } from './builtin-repo.js';
import type { CatalogCore } from './core.js';
import { formatPrice, parsePrice } from './prices.js';
import { Micro, ModelView } from './views.js';

const tag = 'catalog';
const access = 'instance-admin' as const;
const NewOutputLimit = Type.Union([Type.Integer({ minimum: 1 }), Type.Null()], {
  description: 'Output tokens sent with a request that sets no limit and held against budgets, at most the catalogue\'s; null returns to the catalogue\'s',
});
const NewPrice = Type.Union([Type.Number(), Type.String(), Type.Null()], { description: 'US dollars per million tokens ("2.50"); null returns to the catalogue price' });

/** A built-in model as the catalogue ships it and as the service uses it (after an admin's change). */
const BuiltInModelView = Type.Composite([
  Type.Omit(ModelView, ['display_name', 'provider_missing', 'created_at', 'updated_at']),
  Type.Object({
    catalogue_input_micro_usd_per_mtok: Micro,
    catalogue_output_micro_usd_per_mtok: Micro,
    catalogue_output_limit: Type.Integer({ description: 'The model\'s maximum completion size in the catalogue; output_limit is at most this' }),
    hidden: Type.Boolean({ description: 'Hidden models are not listed and not called' }),
  }),
]);

function view(m: CatalogModel, o: OverrideRow | undefined) {
  const input = o?.inputMicroUsdPerMTok ?? m.inputMicroUsdPerMTok;
  const output = o?.outputMicroUsdPerMTok ?? m.outputMicroUsdPerMTok;
  return {
    name: m.name,
    provider: m.provider,
    model_id: m.upstreamId,
    context_window: m.contextWindow,
    output_limit: Math.min(o?.outputLimit ?? m.outputLimit, m.outputLimit),
    catalogue_output_limit: m.outputLimit,
    input_price: formatPrice(input),
    output_price: formatPrice(output),
    input_micro_usd_per_mtok: input,
    output_micro_usd_per_mtok: output,
    catalogue_input_micro_usd_per_mtok: m.inputMicroUsdPerMTok,
    catalogue_output_micro_usd_per_mtok: m.outputMicroUsdPerMTok,
    can_read_images: m.canReadImages,
    can_read_pdf: m.canReadPdf,
    can_call_tools: m.canCallTools,
    hidden: o?.hidden ?? false,
  };
}

/**
 * Admin routes for the built-in providers' priced models (the committed catalogue): list them, hide
 * or re-price one. A model without both prices is never called (SPEC.md pricing), so pricing an
 * unpriced catalogue entry is how an admin makes it usable.
 */
export function builtInModelRoutes(admin: AdminApi, core: CatalogCore): void {
  const { builtIns } = core.snapshot;
  const overrides = async () => new Map((await core.builtInRepo.overrides()).map((o) => [o.name, o]));
  const load = (name: string): CatalogModel => {
    const m = builtIns.model(name);
    if (!m) throw new GatewayError('not_found', `No built-in model named "${name}".`);
    return m;
  };

  admin.route({
    method: 'GET', path: '/built-in-models', summary: 'List the built-in providers\' priced models (hidden ones included)', tag, access,
    query: Type.Object({ provider: Type.Optional(Type.String()) }),
    response: Type.Object({ data: Type.Array(BuiltInModelView) }),
    handler: async ({ query }) => {
      const byName = await overrides();
      const models = builtIns.models().filter((m) => !query.provider || m.provider === query.provider);
      return { data: models.map((m) => view(m, byName.get(m.name))) };
    },
  });

  admin.route({
    method: 'GET', path: '/built-in-models/:name', summary: 'Get a built-in model (name URL-encoded)', tag, access,
    response: BuiltInModelView,
    handler: async ({ params }) => view(load(params.name!), (await overrides()).get(params.name!)),
  });

  admin.route({
    method: 'PATCH', path: '/built-in-models/:name', summary: 'Hide, re-price or lower the output limit of a built-in model', tag, access,
    body: Type.Object({
      hidden: Type.Optional(Type.Boolean()),
      input_price: Type.Optional(NewPrice),
      output_price: Type.Optional(NewPrice),
      output_limit: Type.Optional(NewOutputLimit),
    }),
    response: BuiltInModelView,
    handler: async ({ params, body }) => {
      const m = load(params.name!);
      const before = (await overrides()).get(m.name);
      const price = (v: unknown, param: string, old: number | null | undefined) => (v === undefined ? (old ?? null) : v === null ? null : parsePrice(v, param));
      const next = {
        name: m.name,
        hidden: body.hidden ?? before?.hidden ?? false,
        inputMicroUsdPerMTok: price(body.input_price, 'input_price', before?.inputMicroUsdPerMTok),
        outputMicroUsdPerMTok: price(body.output_price, 'output_price', before?.outputMicroUsdPerMTok),
        outputLimit: body.output_limit === undefined ? (before?.outputLimit ?? null) : body.output_limit,
      };
      if (next.outputLimit !== null && next.outputLimit > m.outputLimit) {
        throw new GatewayError('invalid_request', `output_limit: at most ${m.outputLimit}, the model's maximum completion size in the catalogue.`, { param: 'output_limit' });
      }
      const untouched = next.inputMicroUsdPerMTok === null && next.outputMicroUsdPerMTok === null && next.outputLimit === null;
      if (!next.hidden && untouched) await core.builtInRepo.deleteOverride(m.name);
      else await core.builtInRepo.saveOverride(next, new Date());
      await core.changed();
      return view(m, (await overrides()).get(m.name));
    },
  });
}
