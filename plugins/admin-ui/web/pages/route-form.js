// A route's form (add and edit): name, model and fallbacks picked from the workspace's models
// (the same list clients get from GET /v1/models), fallbacks in order, description and examples.
import { api, seg } from '../api.js';
import { html, useForm, Form, Field } from '../ui.js';

const namePattern = /^[a-z0-9][a-z0-9_-]{0,62}$/;
const lines = (s) => s.split('\n').map((x) => x.trim()).filter(Boolean);

function check(v, editing) {
  const e = {};
  if (!editing) {
    if (v.name.trim() === '') e.name = 'Give the route a name, e.g. code.';
    else if (!namePattern.test(v.name.trim())) e.name = 'Use lowercase letters, numbers, dashes and underscores (up to 63), starting with a letter or number, e.g. code or long-docs.';
  }
  if (!v.model) e.model = 'Choose the model this route sends to.';
  if (v.fallbacks.includes(v.model)) e.fallbacks = 'The route’s own model cannot also be a fallback.';
  else if (new Set(v.fallbacks).size !== v.fallbacks.length) e.fallbacks = 'Each fallback model may appear once.';
  return e;
}

/** Ordered fallback models: each a picker, with up, down and remove; Add fallback appends one. */
function Fallbacks({ form, models }) {
  const list = form.values.fallbacks;
  const set = (next) => form.set('fallbacks', next);
  const move = (i, d) => { const n = [...list]; [n[i], n[i + d]] = [n[i + d], n[i]]; set(n); };
  const error = form.errors.fallbacks;
  return html`<fieldset aria-describedby=${error ? 'fallbacks-err' : undefined}><legend>Fallback models, tried in this order</legend>
    ${list.length === 0 && html`<p class="hint">None: when the model fails, the request fails.</p>`}
    <ol class="fallbacks">${list.map((m, i) => html`<li>
      <label class="sr-only" for=${`fb-${i}`}>Fallback ${i + 1}</label>
      <select id=${`fb-${i}`} name=${i === 0 ? 'fallbacks' : undefined} value=${m} onChange=${(e) => set(list.map((x, j) => (j === i ? e.currentTarget.value : x)))}>
        ${models.map((n) => html`<option value=${n}>${n}</option>`)}</select>
      <button type="button" aria-label=${`Move fallback ${i + 1} up`} disabled=${i === 0} onClick=${() => move(i, -1)}>↑</button>
      <button type="button" aria-label=${`Move fallback ${i + 1} down`} disabled=${i === list.length - 1} onClick=${() => move(i, 1)}>↓</button>
      <button type="button" aria-label=${`Remove fallback ${i + 1}`} onClick=${() => set(list.filter((_, j) => j !== i))}>Remove</button>
    </li>`)}</ol>
    <button type="button" disabled=${models.length === 0} onClick=${() => set([...list, models.find((n) => n !== form.values.model && !list.includes(n)) ?? models[0]])}>Add fallback</button>
    ${error && html`<p class="error" id="fallbacks-err">${error}</p>`}
  </fieldset>`;
}

/** `route` null adds one; `models` are the names offered; `done(message)` after saving. */
export function RouteForm({ base, route, models, done, cancel }) {
  const form = useForm({
    name: route?.name ?? '', model: route?.model ?? '', fallbacks: route?.fallbacks ?? [], description: route?.description ?? '',
    examples: (route?.examples ?? []).join('\n'), enabled: route?.enabled ?? true,
  }, (v) => check(v, route));
  const options = [['', 'Choose a model'], ...[...new Set([...models, ...(route ? [route.model, ...route.fallbacks] : [])])].map((n) => [n, n])];
  return html`<${Form} form=${form} title=${route ? null : 'Add a route'} submitLabel=${route ? 'Save route' : 'Add route'} cancel=${cancel} onSubmit=${async (v) => {
    const body = { model: v.model, fallbacks: v.fallbacks, description: v.description, examples: lines(v.examples), enabled: v.enabled };
    if (route) await api('PATCH', `${base}/routes/${seg(route.name)}`, body);
    else await api('POST', `${base}/routes`, { name: v.name.trim(), ...body });
    if (!route) form.reset();
    return done(route ? `Route ${route.name} saved.` : `Route ${v.name.trim()} added.`);
  }}>
    ${!route && html`<${Field} form=${form} name="name" label="Route name" hint="Lowercase letters, numbers, dashes and underscores; clients send model route/<name>." />`}
    <${Field} form=${form} name="model" label="Route model" type="select" options=${options} />
    <${Fallbacks} form=${form} models=${models} />
    <${Field} form=${form} name="description" label="What the route is for" type="textarea" hint="The classifier compares requests with this and the examples." />
    <${Field} form=${form} name="examples" label="Example requests (one per line)" type="textarea" />
    <${Field} form=${form} name="enabled" label="Enabled" type="checkbox" />
  </${Form}>`;
}
