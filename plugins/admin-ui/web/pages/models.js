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

function ModelForm({ model, done }) {
  const form = useForm(valuesOf(model));
  return html`<${Form} form=${form} title=${model ? `Edit ${model.name}` : 'Add a model'} submitLabel=${model ? 'Save model' : 'Add model'} onSubmit=${async (v) => {
    if (model) await api('PATCH', `/models/${seg(model.name)}`, bodyOf(v, model));
    else await api('POST', '/models', bodyOf(v, null));
    form.reset();
    done();
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
    ${model && html`<button type="button" onClick=${() => done()}>Cancel</button>`}
  </${Form}>`;
}

export function Models() {
  const list = useLoad(() => api('GET', '/models'));
  const [editing, setEditing] = useState(null);
  return html`<h1 tabindex="-1">Models</h1>
    <${Loaded} state=${list}>${(d) => (d.data.length === 0
      ? html`<${Empty}>No added models yet. Add a provider first (Providers page), then add each of its models below with its limits and prices.</${Empty}>`
      : html`<${Paged} caption="Added models" rows=${d.data} head=${['Name', 'Context', 'Output limit', 'Input $/M', 'Output $/M', 'Capabilities', '']}
          row=${(m) => html`<tr>
            <td>${m.name}${m.provider_missing ? html` <span class="badge could_not_connect">provider missing</span>` : ''}</td>
            <td>${m.context_window}</td><td>${m.output_limit}</td><td>${m.input_price}</td><td>${m.output_price}</td>
            <td>${[m.can_read_images && 'images', m.can_read_pdf && 'PDF', m.can_call_tools && 'tools'].filter(Boolean).join(', ') || '—'}</td>
            <td class="actions">
              <button type="button" onClick=${() => setEditing(m)}>Edit ${m.name}</button>
              <${ConfirmButton} label=${`Remove ${m.name}`} confirmLabel="Remove model"
                question=${`Remove the model ${m.name}? Requests naming it are refused from now on.`}
                onConfirm=${async () => { await api('DELETE', `/models/${seg(m.name)}?confirm=${seg(m.name)}`); list.reload(); }} />
            </td>
          </tr>`} />`)}</${Loaded}>
    ${editing && html`<${ModelForm} key=${editing.name} model=${editing} done=${() => { setEditing(null); list.reload(); }} />`}
    <${ModelForm} model=${null} done=${() => list.reload()} />
    <${BuiltInModels} />`;
}
