import { Type, type Static } from '../../kernel/index.js';
import { ModelDeadlines, toBody } from './deadlines.js';
import { formatPrice } from './prices.js';
import type { ModelRow, ProviderRow } from './repo.js';

export const CheckStatus = Type.Union(['connected', 'could_not_connect', 'key_refused', 'unchecked'].map((s) => Type.Literal(s)));

/** A provider as the admin API shows it: the key only as `has_key`, never its value. */
export const ProviderView = Type.Object({
  name: Type.String(),
  vendor: Type.String(),
  address: Type.String(),
  has_key: Type.Boolean({ description: 'A built-in provider: whether its instance-wide key is set' }),
  built_in: Type.Boolean({ description: 'A built-in hosted provider: no row to add, priced models included' }),
  default_address: Type.Union([Type.String(), Type.Null()], {
    description: "A built-in provider: the address it uses when no instance admin set one (the service's, or config builtInAddresses); null for an added provider",
  }),
  check: CheckStatus,
  checked_at: Type.Union([Type.String({ format: 'date-time' }), Type.Null()]),
  created_at: Type.String({ format: 'date-time' }),
  updated_at: Type.String({ format: 'date-time' }),
});

/** A provider row as shown; `defaultAddress` only for a built-in provider (its address when none was set). */
export function providerView(r: ProviderRow, defaultAddress?: string): Static<typeof ProviderView> {
  return {
    name: r.name,
    vendor: r.vendor,
    address: r.address,
    has_key: r.apiKeyEnc !== null,
    built_in: defaultAddress !== undefined,
    default_address: defaultAddress ?? null,
    check: r.check,
    checked_at: r.checkedAt?.toISOString() ?? null,
    created_at: r.createdAt.toISOString(),
    updated_at: r.updatedAt.toISOString(),
  };
}

const Price = Type.Union([Type.String({ description: 'US dollars per million tokens, e.g. "2.50"' }), Type.Null()]);
export const Micro = Type.Union([Type.Integer({ description: 'micro-USD per million tokens' }), Type.Null()]);

/** A model as the admin API shows it; `provider_missing` when its provider was removed. */
export const ModelView = Type.Object({
  name: Type.String(),
  provider: Type.String(),
  model_id: Type.String(),
  display_name: Type.String(),
  context_window: Type.Integer(),
  output_limit: Type.Integer(),
  input_price: Price,
  output_price: Price,
  input_micro_usd_per_mtok: Micro,
  output_micro_usd_per_mtok: Micro,
  can_read_images: Type.Boolean(),
  can_read_pdf: Type.Boolean(),
  can_call_tools: Type.Boolean(),
  provider_missing: Type.Boolean(),
  /** Only when the model has its own deadlines. */
  deadlines: Type.Optional(ModelDeadlines),
  created_at: Type.String({ format: 'date-time' }),
  updated_at: Type.String({ format: 'date-time' }),
});

export function modelView(m: ModelRow, providerExists: boolean): Static<typeof ModelView> {
  return {
    name: m.name,
    provider: m.provider,
    model_id: m.upstreamId,
    display_name: m.displayName,
    context_window: m.contextWindow,
    output_limit: m.outputLimit,
    input_price: formatPrice(m.inputMicroUsdPerMTok),
    output_price: formatPrice(m.outputMicroUsdPerMTok),
    input_micro_usd_per_mtok: m.inputMicroUsdPerMTok,
    output_micro_usd_per_mtok: m.outputMicroUsdPerMTok,
    can_read_images: m.canReadImages,
    can_read_pdf: m.canReadPdf,
    can_call_tools: m.canCallTools,
    provider_missing: !providerExists,
    ...(m.deadlines ? { deadlines: toBody(m.deadlines) } : {}),
    created_at: m.createdAt.toISOString(),
    updated_at: m.updatedAt.toISOString(),
  };
}
