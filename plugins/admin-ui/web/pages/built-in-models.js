// The built-in providers' priced models: hide or show, and re-price (instance admins).
import { useState } from 'preact/hooks';
import { api, seg } from '../api.js';
import { html, useLoad, Loaded, Paged, Empty } from '../ui.js';

export function BuiltInModels() {
  const list = useLoad(() => api('GET', '/built-in-models'));
  const [error, setError] = useState(null);
  const change = async (m, body) => {
    setError(null);
    await api('PATCH', `/built-in-models/${seg(m.name)}`, body).catch((err) => setError(err.message));
    list.reload();
  };
  const price = (m, field) => {
    const value = prompt(`New ${field.replace('_', ' ')} of ${m.name} in USD per million tokens (empty: the catalogue price)`, m[field]);
    if (value !== null) change(m, { [field]: value === '' ? null : value });
  };
  return html`<section aria-labelledby="builtin-h">
    <h2 id="builtin-h">Built-in models</h2>
    <p class="hint">Usable once their provider has a key (Providers page). Hidden models are not listed and not called.</p>
    ${error && html`<p class="error" role="alert">${error}</p>`}
    <${Loaded} state=${list}>${(d) => (d.data.length === 0
      ? html`<${Empty}>No built-in models ship with this service.</${Empty}>`
      : html`<${Paged} caption="Built-in models" rows=${d.data} head=${['Name', 'Input $/M', 'Output $/M', 'Shown', '']}
          row=${(m) => html`<tr>
            <td>${m.name}</td><td>${m.input_price}</td><td>${m.output_price}</td><td>${m.hidden ? 'hidden' : 'shown'}</td>
            <td class="actions">
              <button type="button" onClick=${() => change(m, { hidden: !m.hidden })}>${m.hidden ? 'Show' : 'Hide'} ${m.name}</button>
              <button type="button" onClick=${() => price(m, 'input_price')}>Input price of ${m.name}</button>
              <button type="button" onClick=${() => price(m, 'output_price')}>Output price of ${m.name}</button>
            </td>
          </tr>`} />`)}</${Loaded}>
  </section>`;
}
