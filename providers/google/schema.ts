/**
 * A tool's JSON Schema `parameters` as Gemini takes them: whole, in
 * `FunctionDeclaration.parametersJsonSchema` (@google/genai: "Describes the parameters to the
 * function in JSON Schema format … mutually exclusive with `parameters`"). The older `parameters`
 * field takes only an OpenAPI subset and answers 400 "Unknown name" for `additionalProperties`,
 * `$ref`, `const`…, so a strict tool would have lost its constraints there; current Gemini models
 * read full JSON Schema, so nothing is dropped or rewritten.
 */

type Json = Record<string, unknown>;
const isObject = (v: unknown): v is Json => typeof v === 'object' && v !== null && !Array.isArray(v);

/**
 * The schema as sent, or undefined when the function takes no arguments (an object schema with no
 * properties): Gemini's declaration then carries no parameters at all, as its docs advise.
 *
 * @example
 * geminiJsonSchema({ type: 'object', properties: { q: { type: 'string' } }, additionalProperties: false }) // the same object
 * geminiJsonSchema({ type: 'object', properties: {} }) // undefined
 */
export function geminiJsonSchema(schema: Json | undefined): Json | undefined {
  if (!schema) return undefined;
  const noArguments = schema.type === 'object' && (!isObject(schema.properties) || Object.keys(schema.properties).length === 0) && schema.anyOf === undefined && schema.oneOf === undefined;
  return noArguments ? undefined : schema;
}
