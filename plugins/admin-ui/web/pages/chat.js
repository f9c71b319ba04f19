// Chat: the signed-in person's conversations in a workspace they choose, over the same model API
// as every client (session cookie, x-svc-workspace, x-svc-conversation); see web/chat/.
import { useEffect, useRef, useState } from 'preact/hooks';
import { api, seg } from '../api.js';
import { html, useLoad, Empty, Loaded } from '../ui.js';
import { listModels } from '../chat/model-api.js';
import { useChat } from '../chat/use-chat.js';
import { Thread } from '../chat/thread.js';
import { Composer } from '../chat/composer.js';
import { ConversationHead, ConversationList, chatHref } from '../chat/conversations.js';

const lastWorkspace = 'svc-chat-workspace';

export function Chat({ route, me }) {
  const workspaces = me.workspaces;
  if (workspaces.length === 0) {
    return html`<h1 tabindex="-1">Chat</h1><${Empty}>You are not a member of any workspace yet. Ask a workspace admin to add you; then you can chat here.</${Empty}>`;
  }
  const known = (id) => workspaces.some((w) => w.id === id);
  const stored = localStorage.getItem(lastWorkspace);
  const workspaceId = known(route[0]) ? route[0] : known(stored) ? stored : workspaces[0].id;
  return html`<${ChatIn} key=${workspaceId} me=${me} workspaceId=${workspaceId} conversationId=${known(route[0]) ? (route[1] ?? null) : null} />`;
}

function ChatIn({ me, workspaceId, conversationId }) {
  const workspaces = me.workspaces;
  useEffect(() => localStorage.setItem(lastWorkspace, workspaceId), [workspaceId]);
  const [listVersion, setListVersion] = useState(0);
  const list = useLoad(() => api('GET', `/workspaces/${seg(workspaceId)}/conversations`).then((d) => d.data), [workspaceId, listVersion]);
  const models = useLoad(() => listModels(workspaceId), [workspaceId]);
  const [model, setModel] = useState('auto');
  const go = (id) => { location.hash = chatHref(workspaceId, id); };
  const refreshList = () => setListVersion((v) => v + 1);
  const chat = useChat({ workspaceId, conversationId, onCreated: (id) => { go(id); refreshList(); } });
  const textRef = useRef(null);
  const threadRef = useRef(null);
  // A new message scrolls to the end; a streaming reply is followed unless the person scrolled up to read.
  const shownCount = useRef(0);
  useEffect(() => {
    const el = threadRef.current;
    const added = chat.entries.length !== shownCount.current;
    shownCount.current = chat.entries.length;
    if (el && (added || el.scrollHeight - el.scrollTop - el.clientHeight < 160)) el.scrollTop = el.scrollHeight;
  }, [chat.entries]);
  const conversation = list.data?.find((c) => c.id === conversationId) ?? null;
  const ctx = { me, workspaceId, busy: chat.busy, onAnswer: (e, how) => chat.answer(e, how, model), onRetry: (e) => chat.retry(e, model) };
  return html`<h1 tabindex="-1">Chat</h1>
    <div class="chat">
      <nav class="chat-side" aria-label="Conversations">
        ${workspaces.length > 1 && html`<div class="field">
          <label for="chat-workspace">Workspace</label>
          <select id="chat-workspace" value=${workspaceId} onChange=${(e) => { location.hash = chatHref(e.currentTarget.value); }}>
            ${workspaces.map((w) => html`<option value=${w.id}>${w.name}</option>`)}
          </select>
        </div>`}
        <button type="button" onClick=${() => { go(null); textRef.current?.focus(); }}>New conversation</button>
        <${ConversationList} list=${list} workspaceId=${workspaceId} openId=${conversationId} />
      </nav>
      <section class="chat-main" aria-labelledby="chat-title">
        <${ConversationHead} conversation=${conversation} workspaceId=${workspaceId} onChanged=${refreshList} onDeleted=${() => { go(null); refreshList(); }} />
        <div class="thread-wrap" ref=${threadRef} tabindex="0" role="region" aria-label="Messages">
          ${chat.state.error ? html`<p class="error" role="alert">${chat.state.error.message}</p>`
            : chat.state.loading ? html`<p class="loading" role="status">Loading the conversation…</p>`
            : chat.entries.length === 0 ? html`<p class="hint">Ask anything. With <code>auto</code> the workspace's routes choose the model; each reply shows what decided it.</p>`
            : html`<${Thread} entries=${chat.entries} ctx=${ctx} />`}
        </div>
        <p class="sr-only" role="status">${chat.announce}</p>
        <${Loaded} state=${models}>${(list) => html`<${Composer} models=${list} model=${list.some((m) => m.id === model) ? model : 'auto'} onModel=${setModel}
          busy=${chat.busy} onSend=${chat.send} onStop=${chat.stop} textRef=${textRef} />`}</${Loaded}>
      </section>
    </div>`;
}
