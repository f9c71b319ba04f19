// Lists: tables paged in the browser with an optional search box, and cursor pages of the API.
import { h } from 'preact';
import { useState } from 'preact/hooks';
import htm from 'htm';

const html = htm.bind(h);
let nextId = 0;
/** "Members" → "members"; an acronym such as "API keys" stays as it is. */
const lowerFirst = (s) => (/^[A-Z]{2}/.test(s) ? s : s.charAt(0).toLowerCase() + s.slice(1));

/** A labelled search field; `onInput(text)` on each keystroke. */
export function SearchBox({ label, value, onInput }) {
  const [id] = useState(() => `search-${++nextId}`);
  return html`<div class="field search"><label for=${id}>${label}</label>
    <input id=${id} type="search" value=${value} onInput=${(e) => onInput(e.currentTarget.value)} /></div>`;
}

/**
 * A table whose rows are paged in the browser, `size` at a time. With `search(row) → text`, a
 * search box above it keeps the rows whose text holds every typed word (ignoring case).
 */
export function Paged({ rows, size = 20, head, row, caption, search }) {
  const [page, setPage] = useState(0);
  const [query, setQuery] = useState('');
  const words = query.toLowerCase().split(/\s+/).filter(Boolean);
  const shown = search && words.length ? rows.filter((r) => { const t = search(r).toLowerCase(); return words.every((w) => t.includes(w)); }) : rows;
  const pages = Math.max(1, Math.ceil(shown.length / size));
  const at = Math.min(page, pages - 1);
  return html`${search && html`<${SearchBox} label=${`Search ${lowerFirst(caption ?? 'List')}`} value=${query} onInput=${(q) => { setQuery(q); setPage(0); }} />`}
    ${search && words.length > 0 && html`<p class="hint" role="status">${shown.length} of ${rows.length} shown.</p>`}
    <div class="table-wrap" tabindex="0" role="region" aria-label=${caption ?? 'List'}><table>
      <caption class=${caption ? '' : 'sr-only'}>${caption ?? 'List'}</caption>
      <thead><tr>${head.map((c) => html`<th scope="col">${c}</th>`)}</tr></thead>
      <tbody>${shown.slice(at * size, at * size + size).map(row)}</tbody>
    </table></div>
    ${pages > 1 && html`<nav class="pager" aria-label=${`Pages of ${(caption ?? 'the list').toLowerCase()}`}>
      <button type="button" disabled=${at === 0} onClick=${() => setPage(at - 1)}>Previous</button>
      <span>Page ${at + 1} of ${pages}</span>
      <button type="button" disabled=${at >= pages - 1} onClick=${() => setPage(at + 1)}>Next</button>
    </nav>`}`;
}

/** Pages of an API that answers `next_cursor`: the cursor to send now, and the way back. */
export function useCursors() {
  const [cursors, setCursors] = useState(['']);
  return { cursor: cursors.at(-1), cursors, setCursors, reset: () => setCursors(['']) };
}

/** Newer / Older buttons over `useCursors()`; `next` is the page's `next_cursor`. */
export const CursorPager = ({ pages, next }) => html`<nav class="pager" aria-label="Pages">
  <button type="button" disabled=${pages.cursors.length === 1} onClick=${() => pages.setCursors(pages.cursors.slice(0, -1))}>Newer</button>
  <button type="button" disabled=${!next} onClick=${() => pages.setCursors([...pages.cursors, next])}>Older</button>
</nav>`;
