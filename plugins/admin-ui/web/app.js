// The shell: sign-in gate, menu, and a hash router over the pages in ./pages (one file each).
import { render } from 'preact';
import { useEffect, useRef, useState } from 'preact/hooks';
import { api } from './api.js';
import { html } from './ui.js';
import { pages, findPage } from './pages/index.js';
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

function App() {
  const [me, setMe] = useState(undefined);
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

  const admin = me.person.instance_admin;
  const visible = pages.filter((p) => !p.admin || admin);
  const page = findPage(route[0] ?? '', admin) ?? visible[0];
  const signOut = async () => {
    await api('DELETE', '/sessions/current').catch(() => {});
    location.hash = '#/';
    setMe(null);
  };
  return html`
    <a class="skip" href="#main" onClick=${(e) => { e.preventDefault(); main.current?.querySelector('h1')?.focus(); }}>Skip to content</a>
    <header class="top">
      <span class="brand">svc admin</span>
      <nav aria-label="Main">
        <ul>${visible.map((p) => html`<li><a href=${`#/${p.path}`} aria-current=${p === page ? 'page' : undefined}>${p.title}</a></li>`)}</ul>
      </nav>
      <div class="who">
        <span>${me.person.email}</span>
        <button type="button" onClick=${signOut}>Sign out</button>
      </div>
    </header>
    <main id="main" ref=${main}>
      <${page.component} route=${route.slice(1)} me=${me} />
    </main>`;
}

render(html`<${App} />`, document.getElementById('root'));
