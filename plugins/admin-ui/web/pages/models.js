// Models (instance admins): added models (add with every field, edit, remove) and the built-ins.
import { useState } from 'preact/hooks';
import { api, seg } from '../api.js';
import { html, useLoad, useForm, Form, Field, Loaded, Paged, Empty, ConfirmButton } from '../ui.js';
import { BuiltInModels } from './built-in-models.js';

const deadlineFields = [
  ['first_byte_ms', 'First byte (ms)', 'Stream request sent → response headers'],
  ['first_token_ms', 'First token (ms)', 'Response headers → first stream chunk'],
  ['idle_ms', 'Idle (ms)', 'Longest gap between two stream chunks'],
  ['total_ms', 'Total (ms)', 'A whole reply, request sent → end of body'],
];

/** Form values of a model (strings for inputs); empty for a new one. */
function valuesOf(m) {
  const v = {
    name: m?.name ?? '', display_name: m?.display_name ?? '', context_window: m ? String(m.context_window) : '', output_limit: m ? String(m.output_limit) : '',
    input_price: m?.input_price ?? '', output_price: m?.output_price ?? '',
    can_read_images: m?.can_read_images ?? false, can_read_pdf: m?.can_read_pdf ?? false, can_call_tools: m?.can_call_tools ?? false,
  };
  for (const [k] of deadlineFields) v[`deadlines_${k}`] = m?.deadlines?.[k] ? String(m.deadlines[k]) : '';
  return v;
}

/** The API body from form values: numbers where the API wants them, empty fields left out for it to name. */
function bodyOf(v, editing) {
  const num = (s) => (s === '' ? undefined : Number(s));
  const body = {
    display_name: v.display_name || undefined, context_window: num(v.context_window), output_limit: num(v.output_limit),
    input_price: v.input_price === '' ? undefined : v.input_price, output_price: v.output_price === '' ? undefined : v.output_price,
    can_read_images: v.can_read_images, can_read_pdf: v.can_read_pdf, can_call_tools: v.can_call_tools,
  };
  if (!editing) body.name = v.name;
  const deadlines = {};
  for (const [k] of deadlineFields) if (v[`deadlines_${k}`] !== '') deadlines[k] = Number(v[`deadlines_${k}`]);
  if (Object.keys(deadlines).length) body.deadlines = deadlines;
  else if (editing?.deadlines) body.deadlines = null;
  return body;
}

const whole = (s) => /^\s*\d+\s*$/.test(s) && Number(s) >= 1;
const dollars = /^\s*\d+(\.\d{1,6})?\s*$/;

/** Every mistake the browser can see, at once, in words. */
function check(v, editing) {
  const e = {};
  if (!editing && !/^[a-z0-9-]{1,63}:\S+$/.test(v.name.trim())) e.name = 'Write <provider>:<model id>, e.g. local:meta-llama/Llama-3.1-8B-Instruct; the provider part is an added provider’s name.';
  if (!whole(v.context_window)) e.context_window = 'Enter the context window as a whole number of tokens, e.g. 32768.';
  if (!whole(v.output_limit)) e.output_limit = 'Enter the output limit as a whole number of tokens, e.g. 4096.';
  else if (whole(v.context_window) && Number(v.output_limit) > Number(v.context_window)) e.output_limit = `The output limit (${v.output_limit}) must not exceed the context window (${v.context_window}).`;
  if (!dollars.test(v.input_price)) e.input_price = 'Enter US dollars per million input tokens, e.g. 0.20 (0 for a free model).';
  if (!dollars.test(v.output_price)) e.output_price = 'Enter US dollars per million output tokens, e.g. 0.60 (0 for a free model).';
  for (const [k, label] of deadlineFields) if (v[`deadlines_${k}`] !== '' && !whole(v[`deadlines_${k}`])) e[`deadlines_${k}`] = `${label.replace(' (ms)', '')}: enter whole milliseconds, or leave empty.`;
  return e;
}

/** What removing a model would leave without one: the routes and settings that name it, by workspace. */
async function usesOf(model, workspaces) {
  const { data } = await api('GET', `/model-uses?model=${encodeURIComponent(model)}`);
  const ws = (id) => workspaces.get(id) ?? id;
  const where = { route: (u) => `the route ${u.route} in ${ws(u.workspace_id)}`, fallback: (u) => `a fallback of the route ${u.route} in ${ws(u.workspace_id)}`,
    default_model: (u) => `the default model of ${ws(u.workspace_id)}`, pinned_model: (u) => `the pinned model of ${ws(u.workspace_id)}` };
  if (data.length === 0) return html`<p>Remove the model ${model}? No route or routing setting uses it; requests naming it are refused from now on.</p>`;
  return html`<p><strong>${model} is still in use.</strong> Removing it leaves these without a model until you choose another:</p>
    <ul class="uses">${data.map((u) => html`<li>${where[u.where](u)}</li>`)}</ul>
    <p>Requests they would send to it are refused. Remove it anyway?</p>`;
}

function ModelForm({ model, done }) {
  const form = useForm(valuesOf(model), (v) => check(v, model));
  return html`<${Form} form=${form} title=${model ? `Edit ${model.name}` : 'Add a model'} submitLabel=${model ? 'Save model' : 'Add model'} onSubmit=${async (v) => {
    if (model) await api('PATCH', `/models/${seg(model.name)}`, bodyOf(v, model));
    else await api('POST', '/models', bodyOf(v, null));
    form.reset();
    done(model ? `${model.name} saved.` : `${v.name.trim()} added.`);
    return model ? undefined : `${v.name.trim()} added.`;
  }}>
    ${!model && html`<${Field} form=${form} name="name" label="Name" hint="<provider>:<model id exactly as the provider gives it>, e.g. local:meta-llama/Llama-3.1-8B-Instruct" required />`}
    <${Field} form=${form} name="display_name" label="Display name (optional)" maxlength="200" />
    <div class="row">
      <${Field} form=${form} name="context_window" label="Context window (tokens)" type="number" min="1" step="1" required />
      <${Field} form=${form} name="output_limit" label="Output limit (tokens)" type="number" min="1" step="1" required />
    </div>
    <div class="row">
      <${Field} form=${form} name="input_price" label="Input price (USD per million tokens)" inputmode="decimal" required />
      <${Field} form=${form} name="output_price" label="Output price (USD per million tokens)" inputmode="decimal" required />
    </div>
    <fieldset><legend>Capabilities</legend>
      <${Field} form=${form} name="can_read_images" label="Can read images" type="checkbox" />
      <${Field} form=${form} name="can_read_pdf" label="Can read PDF" type="checkbox" />
      <${Field} form=${form} name="can_call_tools" label="Can call tools" type="checkbox" />
    </fieldset>
    <fieldset><legend>Deadlines (optional; empty uses the service defaults)</legend>
      <div class="row">${deadlineFields.map(([k, label, hint]) => html`<${Field} form=${form} name=${`deadlines_${k}`} label=${label} hint=${hint} type="number" min="1" step="1" />`)}</div>
    </fieldset>
    ${model && html`<button type="button" onClick=${() => done(null)}>Cancel</button>`}
  </${Form}>`;
}

export function Models() {
  const list = useLoad(() => api('GET', '/models'));
  const workspaces = useLoad(() => api('GET', '/workspaces?scope=all').then((d) => new Map(d.data.map((w) => [w.id, w.name]))));
  const [editing, setEditing] = useState(null);
  const [saved, setSaved] = useState(null);
  return html`<h1 tabindex="-1">Models</h1>
    ${saved && html`<p class="notice" role="status">${saved}</p>`}
    <${Loaded} state=${list}>${(d) => (d.data.length === 0
      ? html`<${Empty}>No added models yet. Add a provider first (Providers page), then add each of its models below with its limits and prices, or import them from the provider's list there.</${Empty}>`
      : html`<${Paged} caption="Added models" rows=${d.data} search=${(m) => `${m.name} ${m.display_name ?? ''}`} head=${['Name', 'Context', 'Output limit', 'Input $/M', 'Output $/M', 'Capabilities', '']}
          row=${(m) => html`<tr>
            <td>${m.name}${m.provider_missing ? html` <span class="badge could_not_connect">provider missing</span>` : ''}</td>
            <td>${m.context_window}</td><td>${m.output_limit}</td><td>${m.input_price}</td><td>${m.output_price}</td>
            <td>${[m.can_read_images && 'images', m.can_read_pdf && 'PDF', m.can_call_tools && 'tools'].filter(Boolean).join(', ') || '—'}</td>
            <td class="actions-row">
              <button type="button" aria-label=${`Edit ${m.name}`} onClick=${() => setEditing(m)}>Edit</button>
              <${ConfirmButton} label=${`Remove ${m.name}`} text="Remove" confirmLabel="Remove model"
                question=${() => usesOf(m.name, workspaces.data ?? new Map())}
                onConfirm=${async () => { await api('DELETE', `/models/${seg(m.name)}?confirm=${seg(m.name)}`); await list.reload(); setSaved(`${m.name} removed.`); }} />
            </td>
          </tr>`} />`)}</${Loaded}>
    ${editing && html`<${ModelForm} key=${editing.name} model=${editing} done=${async (msg) => { setEditing(null); await list.reload(); setSaved(typeof msg === 'string' ? msg : null); }} />`}
    <${ModelForm} model=${null} done=${() => list.reload()} />
    <${BuiltInModels} />`;
}
