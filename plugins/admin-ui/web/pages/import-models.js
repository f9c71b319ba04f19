// Import models from a provider's own list (GET /providers/{name}/models): choose which, give the
// limits and prices they share, and each is added with POST /models (the result per model shown).
import { useState } from 'preact/hooks';
import { api } from '../api.js';
import { html, useLoad, useForm, Form, Field, Loaded, Empty, SearchBox } from '../ui.js';

const whole = (s) => /^\s*\d+\s*$/.test(s) && Number(s) >= 1;
const dollars = /^\s*\d+(\.\d{1,6})?\s*$/;

function check(v, chosen) {
  const e = {};
  if (chosen.size === 0) e.context_window = 'Choose at least one model above.';
  if (!whole(v.context_window)) e.context_window = e.context_window ?? 'Enter the context window as a whole number of tokens, e.g. 32768.';
  if (!whole(v.output_limit)) e.output_limit = 'Enter the output limit as a whole number of tokens, e.g. 4096.';
  else if (whole(v.context_window) && Number(v.output_limit) > Number(v.context_window)) e.output_limit = `The output limit (${v.output_limit}) must not exceed the context window (${v.context_window}).`;
  if (!dollars.test(v.input_price)) e.input_price = 'Enter US dollars per million input tokens, e.g. 0.20 (0 for a free model).';
  if (!dollars.test(v.output_price)) e.output_price = 'Enter US dollars per million output tokens, e.g. 0.60 (0 for a free model).';
  return e;
}

export function ImportModels({ provider, done }) {
  const list = useLoad(() => api('GET', `/providers/${encodeURIComponent(provider)}/models`), [provider]);
  const [chosen, setChosen] = useState(new Set());
  const [query, setQuery] = useState('');
  const [results, setResults] = useState([]);
  const form = useForm({ context_window: '', output_limit: '', input_price: '', output_price: '', can_call_tools: false, can_read_images: false }, (v) => check(v, chosen));
  const toggle = (name) => setChosen((s) => { const n = new Set(s); if (n.has(name)) n.delete(name); else n.add(name); return n; });
  return html`<${Loaded} state=${list}>${(d) => {
    const open = d.data.filter((m) => !m.added && m.id.toLowerCase().includes(query.toLowerCase()));
    if (d.data.length === 0) return html`<${Empty}>${provider} lists no models.</${Empty}>`;
    return html`<p class="hint">${provider} lists ${d.data.length} models; ${d.data.filter((m) => m.added).length} are added already.</p>
      <${SearchBox} label="Search the provider's models" value=${query} onInput=${setQuery} />
      <fieldset class="pick-list"><legend>Models to add (${chosen.size} chosen)</legend>
        ${open.length === 0 ? html`<p class="hint">None to add${query ? ' matches the search' : ''}.</p>` : open.slice(0, 200).map((m) => html`<div class="field check">
          <input type="checkbox" id=${`imp-${m.id}`} checked=${chosen.has(m.name)} onChange=${() => toggle(m.name)} /><label for=${`imp-${m.id}`}>${m.id}</label></div>`)}
      </fieldset>
      <${Form} form=${form} submitLabel=${`Add ${chosen.size} model${chosen.size === 1 ? '' : 's'}`} cancel=${html`<button type="button" onClick=${() => done(null)}>Close</button>`} onSubmit=${async (v) => {
        const out = [];
        for (const name of chosen) {
          const body = { name, context_window: Number(v.context_window), output_limit: Number(v.output_limit), input_price: v.input_price.trim(), output_price: v.output_price.trim(), can_call_tools: v.can_call_tools, can_read_images: v.can_read_images };
          out.push(await api('POST', '/models', body).then(() => ({ name, ok: true }), (err) => ({ name, ok: false, message: err.message })));
        }
        setResults(out);
        setChosen(new Set());
        list.reload();
        const added = out.filter((r) => r.ok).length;
        return `Added ${added} of ${out.length} model${out.length === 1 ? '' : 's'}; set each one's own limits and prices on the Models page if they differ.`;
      }}>
        <p class="hint">These limits and prices apply to every chosen model.</p>
        <div class="row">
          <${Field} form=${form} name="context_window" label="Context window (tokens)" inputmode="numeric" />
          <${Field} form=${form} name="output_limit" label="Output limit (tokens)" inputmode="numeric" />
        </div>
        <div class="row">
          <${Field} form=${form} name="input_price" label="Input price (USD per million tokens)" inputmode="decimal" />
          <${Field} form=${form} name="output_price" label="Output price (USD per million tokens)" inputmode="decimal" />
        </div>
        <${Field} form=${form} name="can_call_tools" label="Can call tools" type="checkbox" />
        <${Field} form=${form} name="can_read_images" label="Can read images" type="checkbox" />
      </${Form}>
      ${results.some((r) => !r.ok) && html`<ul class="uses" aria-label="Models not added">${results.filter((r) => !r.ok).map((r) => html`<li class="error">${r.name}: ${r.message}</li>`)}</ul>`}`;
  }}</${Loaded}>`;
}
