// Small inline-SVG bar charts for the home page: one bar per time bucket, and meters for caps.
// Each chart is an image with a summary in words; the numbers are also in the tables beside them.
import { html, money } from './ui.js';

/** `points`: [{ label, value, bad }] drawn as bars (bad ones in the danger colour). */
export function Bars({ title, points, format = String }) {
  const max = Math.max(1, ...points.map((p) => p.value));
  const total = points.reduce((s, p) => s + p.value, 0);
  const peak = points.reduce((a, p) => (p.value > (a?.value ?? -1) ? p : a), null);
  const w = 100 / Math.max(1, points.length);
  const summary = `${title}: ${format(total)} in total${peak && peak.value > 0 ? `, most at ${peak.label} (${format(peak.value)})` : ''}.`;
  return html`<figure class="bars">
    <figcaption>${title} <span class="hint">${format(total)}</span></figcaption>
    <svg viewBox="0 0 100 40" preserveAspectRatio="none" role="img" aria-label=${summary}>
      ${points.map((p, i) => html`<rect x=${i * w + w * 0.1} y=${40 - (p.value / max) * 38} width=${w * 0.8} height=${(p.value / max) * 38} class=${p.bad ? 'bad' : 'ok'}><title>${p.label}: ${format(p.value)}</title></rect>`)}
    </svg>
    <div class="axis-row" aria-hidden="true"><span>${points[0]?.label ?? ''}</span><span>${points.at(-1)?.label ?? ''}</span></div>
  </figure>`;
}

/** A cap's use: spent of amount, as a bar and in words. */
export function CapMeter({ label, spent, amount }) {
  const pct = amount > 0 ? Math.min(100, Math.round((spent / amount) * 100)) : 100;
  const level = pct >= 100 ? 'full' : pct >= 80 ? 'high' : 'ok';
  return html`<div class="cap-meter">
    <p><strong>${label}</strong>: ${money(spent)} of ${money(amount)} (${pct}%)</p>
    <div class=${`meter ${level}`} aria-hidden="true"><span data-pct=${pct} class=${`w${Math.round(pct / 5) * 5}`}></span></div>
  </div>`;
}
