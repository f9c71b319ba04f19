import { GatewayError } from '../../kernel/index.js';

/**
 * Names of the eight built-in hosted providers (SPEC.md "What the service does"). They are taken:
 * an admin-added provider may not use one, so `openai:gpt-4o` always means the built-in.
 */
export const reservedProviderNames: readonly string[] = ['openai', 'anthropic', 'google', 'mistral', 'groq', 'deepseek', 'xai', 'openrouter'];

/** Lowercase letters, numbers and dashes; no leading, trailing or doubled dash. */
export const providerNamePattern = /^[a-z0-9]+(-[a-z0-9]+)*$/;

const maxProviderName = 63;
const maxModelId = 300;
// Control characters and spaces never occur in provider model ids; refusing them catches paste errors.
const badModelIdChars = /[\s\u0000-\u001f\u007f]/;

function invalid(param: string, message: string): GatewayError {
  return new GatewayError('invalid_request', message, { param });
}

/**
 * Refuses a provider name that is malformed or taken by a built-in provider (400, param `name`):
 * the eight the spec promises, and any other installed vendor that declares `builtIn` (`taken`).
 */
export function checkProviderName(name: string, taken: { has(name: string): boolean } = new Set()): void {
  if (!providerNamePattern.test(name) || name.length > maxProviderName) {
    throw invalid('name', `name: use lowercase letters, numbers and dashes (at most ${maxProviderName} characters), e.g. "local-llm".`);
  }
  if (reservedProviderNames.includes(name) || taken.has(name)) throw invalid('name', `name: "${name}" is the name of a built-in provider; choose another.`);
}

/**
 * The provider's API base as given, minus trailing slashes: an http(s) URL with its path, no
 * credentials, query or fragment, and not ending with /chat/completions (the service appends it).
 *
 * @example
 * normalizeAddress('http://ollama:11434/v1/'); // 'http://ollama:11434/v1'
 */
export function normalizeAddress(raw: string, param = 'address'): string {
  const address = raw.trim().replace(/\/+$/, '');
  let url: URL;
  try {
    url = new URL(address);
  } catch {
    throw invalid(param, `${param}: must be an http:// or https:// URL, e.g. "http://ollama:11434/v1".`);
  }
  if (url.protocol !== 'http:' && url.protocol !== 'https:') throw invalid(param, `${param}: must start with http:// or https://.`);
  if (url.username || url.password) throw invalid(param, `${param}: must not contain a user name or password; put the key in api_key.`);
  if (url.search || url.hash || address.includes('?') || address.includes('#')) throw invalid(param, `${param}: must not contain a query (?) or fragment (#).`);
  if (/\/chat\/completions$/i.test(url.pathname.replace(/\/+$/, ''))) {
    throw invalid(param, `${param}: give the API base without /chat/completions; the service appends it (and /models for the check).`);
  }
  return address;
}

/**
 * Splits `<provider>:<id>` at the FIRST colon; the id is kept exactly (it may hold colons and
 * slashes, e.g. `local:llama3:8b-instruct-q4_K_M`, `hf:meta-llama/Llama-3.1-8B-Instruct`).
 */
export function splitModelName(name: string): { provider: string; id: string } {
  const colon = name.indexOf(':');
  const provider = colon > 0 ? name.slice(0, colon) : '';
  const id = colon > 0 ? name.slice(colon + 1) : '';
  if (!providerNamePattern.test(provider) || id === '') {
    throw invalid('name', 'name: must be "<provider>:<provider\'s model id>", e.g. "local:llama3:8b".');
  }
  if (id.length > maxModelId) throw invalid('name', `name: the model id is longer than ${maxModelId} characters.`);
  if (badModelIdChars.test(id)) throw invalid('name', 'name: the model id must not contain spaces or control characters.');
  return { provider, id };
}
