// A small inline-SVG stacked bar chart: one bar per day, one colour per group. The same numbers
// are always given as a table beside it, which is what screen readers use.
import { html, money } from './ui.js';

/** Colours with at least 3:1 contrast against white, told apart by lightness as well as hue. */
const colours = ['#1f5fbf', '#c2410c', '#15803d', '#7e22ce', '#a16207', '#0e7490', '#be123c', '#4b5563'];

const dayMs = 86_400_000;
function days(from, to) {
  const out = [];
  for (let t = Date.parse(`${from}T00:00:00Z`); t <= Date.parse(`${to}T00:00:00Z`); t += dayMs) out.push(new Date(t).toISOString().slice(0, 10));
  return out;
}

/** `groups`: [{ label, series: [{ date, cost_micro_usd }] }]; draws from..to inclusive. */
export function SpendChart({ groups, from, to, title }) {
  const dates = days(from, to);
  const index = new Map(dates.map((d, i) => [d, i]));
  const stacks = dates.map(() => []);
  groups.forEach((g, gi) => {
    for (const s of g.series) {
      const i = index.get(s.date);
      if (i !== undefined) stacks[i].push({ gi, v: s.cost_micro_usd });
    }
  });
  const max = Math.max(1, ...stacks.map((st) => st.reduce((a, b) => a + b.v, 0)));
  const w = 720;
  const hgt = 220;
  const pad = 40;
  const bw = (w - pad) / dates.length;
  const total = groups.reduce((a, g) => a + g.series.reduce((b, s) => b + s.cost_micro_usd, 0), 0);
  return html`<figure class="chart">
    <svg viewBox=${`0 0 ${w} ${hgt + 24}`} role="img" aria-label=${`${title}: ${money(total)} from ${from} to ${to}; the table below lists the numbers.`}>
      <line x1=${pad} y1=${hgt} x2=${w} y2=${hgt} stroke="#333" />
      <text x="0" y="12" class="axis">${money(max)}</text>
      <text x="0" y=${hgt} class="axis">$0</text>
      ${stacks.map((st, i) => {
        let y = hgt;
        return st.map(({ gi, v }) => {
          const bh = (v / max) * (hgt - 16);
          y -= bh;
          return html`<rect x=${pad + i * bw + 1} y=${y} width=${Math.max(1, bw - 2)} height=${bh} fill=${colours[gi % colours.length]}><title>${dates[i]} ${groups[gi].label}: ${money(v)}</title></rect>`;
        });
      })}
      <text x=${pad} y=${hgt + 18} class="axis">${from}</text>
      <text x=${w} y=${hgt + 18} class="axis" text-anchor="end">${to}</text>
    </svg>
    <figcaption>
      <ul class="legend">${groups.map((g, gi) => html`<li><svg class="swatch" width="12" height="12" aria-hidden="true"><rect width="12" height="12" fill=${colours[gi % colours.length]} /></svg>${g.label}</li>`)}</ul>
    </figcaption>
  </figure>`;
}
