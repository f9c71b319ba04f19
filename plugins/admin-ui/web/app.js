// The shell: sign-in gate, the sidebar menu (grouped by area, only what the person may use) and a
// hash router over the pages in ./pages (one file each, listed in pages/index.js).
import { render } from 'preact';
import { useEffect, useRef, useState } from 'preact/hooks';
import { api } from './api.js';
import { html } from './ui.js';
import { menu, pageFor } from './pages/index.js';
import { SignIn, ResetPassword } from './pages/sign-in.js';

/** The current hash route as path segments: #/workspaces/abc → ['workspaces', 'abc']. */
function useRoute() {
  const read = () => (location.hash.replace(/^#\/?/, '').split('?')[0] || '').split('/').filter(Boolean).map(decodeURIComponent);
  const [route, setRoute] = useState(read);
  useEffect(() => {
    const on = () => setRoute(read());
    addEventListener('hashchange', on);
    return () => removeEventListener('hashchange', on);
  }, []);
  return route;
}

function Sidebar({ me, page, open, onNavigate }) {
  return html`<nav id="side" class=${`side ${open ? 'open' : ''}`} aria-label="Main">
    ${menu(me).map((g) => html`<div class="area">
      <p class="area-name" id=${`area-${g.area.replace(/\W+/g, '-')}`}>${g.area}</p>
      <ul aria-labelledby=${`area-${g.area.replace(/\W+/g, '-')}`}>${g.pages.map((p) => html`<li>
        <a href=${`#/${p.path}`} aria-current=${p === page ? 'page' : undefined} onClick=${onNavigate}>${p.title}</a>
      </li>`)}</ul>
    </div>`)}
  </nav>`;
}

function App() {
  const [me, setMe] = useState(undefined);
  const [menuOpen, setMenuOpen] = useState(false);
  const route = useRoute();
  const main = useRef(null);
  const loadMe = () => api('GET', '/me').then(setMe, () => setMe(null));
  useEffect(() => {
    loadMe();
    const out = () => setMe(null);
    addEventListener('svc:signed-out', out);
    return () => removeEventListener('svc:signed-out', out);
  }, []);
  // After navigation, focus the page heading so screen readers announce the new page.
  useEffect(() => main.current?.querySelector('h1')?.focus(), [route.join('/'), !!me]);

  if (me === undefined) return html`<p class="loading" role="status">Loading…</p>`;
  if (route[0] === 'reset') return html`<main id="main" ref=${main}><${ResetPassword} token=${route[1] ?? ''} /></main>`;
  if (me === null) return html`<main id="main" ref=${main}><${SignIn} onSignedIn=${loadMe} /></main>`;

  const page = pageFor(route[0] ?? '', me);
  const rest = page.path === route[0] ? route.slice(1) : [];
  const signOut = async () => {
    await api('DELETE', '/sessions/current').catch(() => {});
    location.hash = '#/';
    setMe(null);
  };
  return html`
    <a class="skip" href="#main" onClick=${(e) => { e.preventDefault(); main.current?.querySelector('h1')?.focus(); }}>Skip to content</a>
    <div class="shell">
      <header class="top">
        <button type="button" class="menu-toggle" aria-expanded=${menuOpen ? 'true' : 'false'} aria-controls="side" onClick=${() => setMenuOpen(!menuOpen)}>Menu</button>
        <a class="brand" href="#/">svc</a>
        <div class="who">
          <span>${me.person.email}</span>
          <button type="button" onClick=${signOut}>Sign out</button>
        </div>
      </header>
      <${Sidebar} me=${me} page=${page} open=${menuOpen} onNavigate=${() => setMenuOpen(false)} />
      <main id="main" ref=${main}>
        <${page.component} key=${page.path} route=${rest} me=${me} reloadMe=${loadMe} />
      </main>
    </div>`;
}

render(html`<${App} />`, document.getElementById('root'));
