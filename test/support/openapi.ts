import { readFileSync } from 'node:fs';
import { resolve } from 'node:path';
import { Ajv2020, type ValidateFunction } from 'ajv/dist/2020.js';
import { packageRoot } from '../../kernel/paths.js';

/**
 * Validators for the Chat Completions wire format, compiled from the schemas of the official
 * OpenAPI description (the service's wire contract). OpenAPI-only keywords are ignored (strict: false).
 */
let ajv: Ajv2020 | undefined;
const cache = new Map<string, ValidateFunction>();

/** OpenAPI 3.0 leftovers in the 3.1 document: `nullable` becomes a JSON Schema null type. */
function normalize(node: unknown): unknown {
  if (Array.isArray(node)) return node.map(normalize);
  if (typeof node !== 'object' || node === null) return node;
  const out: Record<string, unknown> = {};
  for (const [k, v] of Object.entries(node)) if (k !== 'nullable') out[k] = normalize(v);
  const n = node as Record<string, unknown>;
  if (n.nullable === true) {
    if (typeof n.type === 'string') out.type = [n.type, 'null'];
    if (Array.isArray(out.enum) && !out.enum.includes(null)) out.enum = [...(out.enum as unknown[]), null];
    else if (n.type === undefined) return { anyOf: [out, { type: 'null' }] };
  }
  return out;
}

function load(): Ajv2020 {
  if (ajv) return ajv;
  // Extracted from shared/data/openai-openapi.yaml by scripts/extract-openai-schemas.mjs.
  const file = resolve(packageRoot, 'test/support/openai-chat-schemas.json');
  const doc = JSON.parse(readFileSync(file, 'utf8')) as Record<string, unknown>;
  ajv = new Ajv2020({ strict: false, validateFormats: false, allErrors: false });
  ajv.addSchema({ $id: 'openai', components: normalize(doc.components) }, 'openai');
  return ajv;
}

/** Throws with the schema errors when `value` does not match components.schemas[name]. */
export function assertSchema(name: string, value: unknown): void {
  let validate = cache.get(name);
  if (!validate) {
    validate = load().compile({ $ref: `openai#/components/schemas/${name}` });
    cache.set(name, validate);
  }
  if (!validate(value)) {
    throw new Error(`${name} schema violation: ${JSON.stringify(validate.errors?.slice(0, 3))} in ${JSON.stringify(value).slice(0, 400)}`);
  }
}
