// Copies the Chat Completions wire schemas (and everything they reference) out of the official
// OpenAPI description in ../shared/data into test/support/openai-chat-schemas.json, so the tests
// validate replies without depending on where shared/ sits. Run again when shared/ changes.
import { readFileSync, writeFileSync } from 'node:fs';
import { parse } from 'yaml';

const roots = ['CreateChatCompletionResponse', 'CreateChatCompletionStreamResponse', 'ErrorResponse', 'CreateChatCompletionRequest'];
const source = new URL('../../shared/data/openai-openapi.yaml', import.meta.url);
const doc = parse(readFileSync(source, 'utf8'));
const all = doc.components.schemas;
const keep = {};
const visit = (node) => {
  if (Array.isArray(node)) return node.forEach(visit);
  if (!node || typeof node !== 'object') return;
  for (const [k, v] of Object.entries(node)) {
    if (k === '$ref' && typeof v === 'string' && v.startsWith('#/components/schemas/')) {
      const name = v.slice('#/components/schemas/'.length);
      if (!keep[name]) {
        keep[name] = all[name];
        visit(all[name]);
      }
    } else visit(v);
  }
};
for (const r of roots) {
  keep[r] = all[r];
  visit(all[r]);
}
const out = { source: 'shared/data/openai-openapi.yaml (openai/openai-openapi, MIT)', openapi: doc.openapi, components: { schemas: keep } };
writeFileSync(new URL('../test/support/openai-chat-schemas.json', import.meta.url), JSON.stringify(out));
console.log(`${Object.keys(keep).length} schemas written`);
