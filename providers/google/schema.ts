/**
 * A tool's JSON Schema `parameters` as Gemini's `FunctionDeclaration.parameters` accepts them.
 * Gemini takes an OpenAPI-style subset and answers 400 "Unknown name …" for anything else
 * (`additionalProperties`, `$schema`, `$ref`, `const`, `default`, …), so only the keys it knows
 * are kept, `type: [x, "null"]` becomes `nullable`, `const` becomes a one-value `enum`, enum
 * values become strings, and `required` names only properties that exist.
 */

type Json = Record<string, unknown>;
const isObject = (v: unknown): v is Json => typeof v === 'object' && v !== null && !Array.isArray(v);

const kept = new Set([
  'type', 'format', 'title', 'description', 'nullable', 'enum', 'items', 'properties', 'required', 'anyOf',
  'minItems', 'maxItems', 'minimum', 'maximum', 'minLength', 'maxLength', 'pattern', 'minProperties', 'maxProperties', 'propertyOrdering',
]);

function clean(node: unknown): Json {
  if (!isObject(node)) return {};
  const out: Json = {};
  for (const [k, v] of Object.entries(node)) {
    if (!kept.has(k)) continue;
    if (k === 'properties' && isObject(v)) out.properties = Object.fromEntries(Object.entries(v).map(([name, s]) => [name, clean(s)]));
    else if (k === 'items') out.items = clean(v);
    else if (k === 'anyOf' && Array.isArray(v)) out.anyOf = v.map(clean);
    else if (k === 'enum' && Array.isArray(v)) out.enum = v.filter((e) => e !== null).map(String);
    else out[k] = v;
  }
  if (Array.isArray(node.type)) {
    const types = node.type.filter((t) => t !== 'null');
    if (types.length === 1) out.type = types[0];
    else delete out.type;
    if (types.length < node.type.length) out.nullable = true;
  }
  if (node.const !== undefined && out.enum === undefined) out.enum = [String(node.const)];
  if (Array.isArray(out.required)) {
    const props = isObject(out.properties) ? out.properties : {};
    out.required = out.required.filter((r) => typeof r === 'string' && r in props);
    if ((out.required as unknown[]).length === 0) delete out.required;
  }
  return out;
}

/**
 * The cleaned schema, or undefined when the function takes no arguments (Gemini refuses an
 * object schema with no properties).
 *
 * @example
 * geminiParameters({ type: 'object', properties: { q: { type: ['string', 'null'] } }, additionalProperties: false })
 * // { type: 'object', properties: { q: { type: 'string', nullable: true } } }
 */
export function geminiParameters(schema: Record<string, unknown> | undefined): Json | undefined {
  if (!schema) return undefined;
  const out = clean(schema);
  if (out.type === 'object' && (!isObject(out.properties) || Object.keys(out.properties).length === 0)) return undefined;
  return out;
}
