// The built-in providers' priced models: search, hide or show, and re-price in a form (instance admins).
import { useState } from 'preact/hooks';
import { api, seg } from '../api.js';
import { html, useLoad, useForm, Form, Field, Loaded, Paged, Empty, DialogButton } from '../ui.js';

const price = /^\s*\d+(\.\d{1,6})?\s*$/;

function PriceForm({ model, done }) {
  const form = useForm({ input_price: model.input_price ?? '', output_price: model.output_price ?? '' }, (v) => ({
    input_price: v.input_price.trim() && !price.test(v.input_price) ? 'Enter US dollars per million tokens, e.g. 2.50 (at most 6 decimals), or leave empty for the catalogue price.' : null,
    output_price: v.output_price.trim() && !price.test(v.output_price) ? 'Enter US dollars per million tokens, e.g. 10 (at most 6 decimals), or leave empty for the catalogue price.' : null,
  }));
  return html`<${Form} form=${form} submitLabel="Save prices" onSubmit=${async (v) => {
    await api('PATCH', `/built-in-models/${seg(model.name)}`, { input_price: v.input_price.trim() || null, output_price: v.output_price.trim() || null });
    done();
  }} cancel=${html`<button type="button" onClick=${() => done(false)}>Cancel</button>`}>
    <${Field} form=${form} name="input_price" label="Input price (USD per million tokens)" inputmode="decimal" hint="Empty: the catalogue price." />
    <${Field} form=${form} name="output_price" label="Output price (USD per million tokens)" inputmode="decimal" hint="Empty: the catalogue price." />
  </${Form}>`;
}

export function BuiltInModels() {
  const list = useLoad(() => api('GET', '/built-in-models'));
  const [error, setError] = useState(null);
  const [saved, setSaved] = useState(null);
  const change = async (m, body) => {
    setError(null);
    await api('PATCH', `/built-in-models/${seg(m.name)}`, body).catch((err) => setError(err.message));
    list.reload();
  };
  return html`<section aria-labelledby="builtin-h">
    <h2 id="builtin-h">Built-in models</h2>
    <p class="hint">Usable once their provider has a key (Providers page). Hidden models are not listed and not called.</p>
    ${error && html`<p class="error" role="alert">${error}</p>`}
    ${saved && html`<p class="notice" role="status">${saved}</p>`}
    <${Loaded} state=${list}>${(d) => (d.data.length === 0
      ? html`<${Empty}>No built-in models ship with this service.</${Empty}>`
      : html`<${Paged} caption="Built-in models" rows=${d.data} search=${(m) => `${m.name} ${m.display_name ?? ''}`} head=${['Name', 'Input $/M', 'Output $/M', 'Shown', '']}
          row=${(m) => html`<tr data-model=${m.name}>
            <td>${m.name}</td><td>${m.input_price}</td><td>${m.output_price}</td><td>${m.hidden ? 'hidden' : 'shown'}</td>
            <td class="actions-row">
              <button type="button" aria-label=${`${m.hidden ? 'Show' : 'Hide'} ${m.name}`} onClick=${() => change(m, { hidden: !m.hidden })}>${m.hidden ? 'Show' : 'Hide'}</button>
              <${DialogButton} label=${`Prices of ${m.name}`} text="Prices" title=${`Prices of ${m.name}`}>${(close) => html`<${PriceForm} model=${m}
                done=${(ok = true) => { close(); if (ok) void list.reload().then(() => setSaved(`Prices of ${m.name} saved.`)); }} />`}</${DialogButton}>
            </td>
          </tr>`} />`)}</${Loaded}>
  </section>`;
}
