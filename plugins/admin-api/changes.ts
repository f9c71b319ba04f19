import type { TSchema } from '@sinclair/typebox';
import type { AuditValue } from '../../kernel/index.js';

/** What an audit entry keeps of a request body. */
export interface Changes {
  fields: string[];
  values: Record<string, AuditValue>;
}

const maxFields = 100;
const maxDepth = 4;
/** Keys of free-form objects (a provider's headers, a server's environment) are kept only when they look like names. */
const nameLike = /^[A-Za-z0-9_.-]{1,64}$/;

type Schema = TSchema & {
  properties?: Record<string, Schema>;
  patternProperties?: Record<string, Schema>;
  additionalProperties?: boolean | Schema;
  anyOf?: Schema[];
  const?: unknown;
  enum?: unknown[];
};

/** The branches of a union, or the schema itself. */
const branches = (s: Schema | undefined): Schema[] => (s ? (s.anyOf ? s.anyOf.flatMap((b) => branches(b)) : [s]) : []);

/** The schema of `key` inside an object schema (a declared property, or a record's values). */
function child(s: Schema | undefined, key: string): Schema | undefined {
  for (const b of branches(s)) {
    const found = b.properties?.[key] ?? Object.values(b.patternProperties ?? {})[0] ?? (typeof b.additionalProperties === 'object' ? b.additionalProperties : undefined);
    if (found) return found;
  }
  return undefined;
}

/** A string is kept only when it is one of the schema's fixed words (a role, a state), never free text. */
function fixedWord(s: Schema | undefined, value: string): boolean {
  return branches(s).some((b) => b.const === value || (Array.isArray(b.enum) && b.enum.includes(value)));
}

/**
 * The fields a body sets, as dotted paths, and the values it is safe to keep: booleans, numbers,
 * null and fixed words of an enumeration. Free text (names, e-mails, URLs, keys, passwords,
 * prompts) is named, never kept; arrays are named with their length only.
 *
 * @example
 * describeChanges(schema, { status: 'suspended', name: 'Ann' }) // { fields: ['name', 'status'], values: { status: 'suspended' } }
 */
export function describeChanges(schema: TSchema | undefined, body: unknown): Changes {
  const out: Changes = { fields: [], values: {} };
  const walk = (s: Schema | undefined, value: unknown, path: string, depth: number): void => {
    if (out.fields.length >= maxFields) return;
    if (value !== null && typeof value === 'object' && !Array.isArray(value) && depth < maxDepth) {
      for (const [k, v] of Object.entries(value).sort(([a], [b]) => a.localeCompare(b))) {
        walk(child(s, k), v, path ? `${path}.${nameLike.test(k) ? k : '*'}` : k, depth + 1);
      }
      return;
    }
    if (!path) return;
    out.fields.push(path);
    if (value === null || typeof value === 'boolean' || typeof value === 'number') out.values[path] = value;
    else if (typeof value === 'string' && fixedWord(s, value)) out.values[path] = value;
    else if (Array.isArray(value)) out.values[`${path}.length`] = value.length;
  };
  walk(schema as Schema | undefined, body, '', 0);
  return out;
}
