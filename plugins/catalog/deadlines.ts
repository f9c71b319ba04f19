import { Type, type Static, type UpstreamTimeouts } from '../../kernel/index.js';

const Ms = (description: string) => Type.Optional(Type.Number({ multipleOf: 1, minimum: 1, maximum: 3_600_000, description }));

/**
 * A model's own deadlines over its provider's (README "When the upstream fails"): reasoning models
 * need a long first token, a slow local model a long whole reply. `null` clears them.
 */
export const ModelDeadlines = Type.Union([
  Type.Object(
    {
      first_byte_ms: Ms('Stream request sent → response headers'),
      first_token_ms: Ms('Response headers → first stream chunk'),
      idle_ms: Ms('Longest gap between two stream chunks'),
      total_ms: Ms('A whole reply, request sent → end of body'),
    },
    { additionalProperties: false },
  ),
  Type.Null(),
]);
export type ModelDeadlinesBody = Static<typeof ModelDeadlines>;

type Deadlines = Partial<UpstreamTimeouts>;

/** Admin body → the catalog's form; undefined when none is set. */
export function fromBody(b: ModelDeadlinesBody | undefined): Deadlines | undefined {
  if (!b) return undefined;
  const d: Deadlines = {};
  if (b.first_byte_ms !== undefined) d.firstByteMs = b.first_byte_ms;
  if (b.first_token_ms !== undefined) d.firstTokenMs = b.first_token_ms;
  if (b.idle_ms !== undefined) d.idleMs = b.idle_ms;
  if (b.total_ms !== undefined) d.totalMs = b.total_ms;
  return Object.keys(d).length > 0 ? d : undefined;
}

export function toBody(d: Deadlines | undefined): ModelDeadlinesBody {
  if (!d) return null;
  const b: NonNullable<ModelDeadlinesBody> = {};
  if (d.firstByteMs !== undefined) b.first_byte_ms = d.firstByteMs;
  if (d.firstTokenMs !== undefined) b.first_token_ms = d.firstTokenMs;
  if (d.idleMs !== undefined) b.idle_ms = d.idleMs;
  if (d.totalMs !== undefined) b.total_ms = d.totalMs;
  return b;
}

/** The `deadlines` column (JSON text or null) ↔ the catalog's form. */
export const column = {
  write: (d: Deadlines | undefined): string | null => (d ? JSON.stringify(d) : null),
  read: (v: unknown): Deadlines | undefined => (typeof v === 'string' && v ? (JSON.parse(v) as Deadlines) : undefined),
};
