// The conversation's messages: yours (with attachments), the replies (streamed text, what decided
// them, errors as sentences, Stop/Try again) and tool approvals waiting for an answer.
import { html } from '../ui.js';
import { displayParts } from './attachments.js';
import { Decision } from './decision.js';
import { canRetry, sentence } from './errors.js';

/** Text with fenced code blocks as <pre>; everything else as wrapped paragraphs (no HTML is interpreted). */
function Rich({ text }) {
  const pieces = text.split(/(```[^\n]*\n[\s\S]*?(?:```|$))/).filter(Boolean);
  return pieces.map((p) => {
    const code = /^```([^\n]*)\n([\s\S]*?)(?:```)?$/.exec(p);
    return code
      ? html`<pre class="code" tabindex="0" aria-label=${`Code${code[1] ? ` (${code[1]})` : ''}`}><code>${code[2]}</code></pre>`
      : html`<p class="prose">${p.replace(/^\n+|\n+$/g, '')}</p>`;
  });
}

function Files({ files }) {
  if (files.length === 0) return null;
  return html`<ul class="files" aria-label="Attachments">${files.map((f) => html`<li>
    ${f.kind === 'image' && f.url ? html`<img src=${f.url} alt="Attached image" />` : html`<span class="file-kind">${f.kind === 'pdf' ? 'PDF' : 'Text'}</span> ${f.name}`}
  </li>`)}</ul>`;
}

const answeredText = {
  approve: 'You approved this call; the reply continues below.',
  always: 'You approved this tool for good in this workspace; the reply continues below.',
  deny: 'You denied this call; the assistant was told.',
  skipped: 'Not answered: a newer message followed.',
};

function Approval({ entry, busy, onAnswer }) {
  const p = entry.pending;
  const id = `apr-${entry.id}`;
  return html`<div class="approval" role="group" aria-labelledby=${id}>
    <p id=${id}><strong>Approval needed:</strong> the assistant wants to run the tool <code>${p.tool}</code> with these arguments:</p>
    <pre class="code" tabindex="0" aria-label="Tool arguments"><code>${JSON.stringify(p.arguments, null, 2)}</code></pre>
    ${entry.answered
      ? html`<p class="hint">${answeredText[entry.answered]}</p>`
      : html`<div class="actions">
          <button type="button" class="primary" disabled=${busy} onClick=${() => onAnswer(entry, 'approve')}>Approve</button>
          <button type="button" disabled=${busy} onClick=${() => onAnswer(entry, 'always')}>Approve always</button>
          <button type="button" class="danger" disabled=${busy} onClick=${() => onAnswer(entry, 'deny')}>Deny</button>
          <p class="hint">Approve always lets you run this tool in this workspace without being asked again.</p>
        </div>`}
  </div>`;
}

function Reply({ entry, ctx }) {
  const { me, workspaceId, busy, onAnswer, onRetry } = ctx;
  const e = entry.error;
  return html`<article class="msg reply" aria-label="Reply" aria-busy=${entry.streaming ? 'true' : 'false'} data-request-id=${entry.requestId ?? ''}>
    ${entry.content ? html`<${Rich} text=${entry.content} />` : entry.streaming ? html`<p class="hint">Writing…</p>` : null}
    ${entry.pending && html`<${Approval} entry=${entry} busy=${busy} onAnswer=${onAnswer} />`}
    ${e && html`<div class="chat-error" role="alert"><p>${sentence(e)}</p>${e.requestId && html`<p class="hint">Request id: <code>${e.requestId}</code></p>`}</div>`}
    ${entry.stopped && html`<p class="hint" role="note">Stopped. This reply is not kept in the conversation.</p>`}
    ${(entry.stopped || (e && canRetry(e))) && entry.userEntryId && !busy && html`<button type="button" onClick=${() => onRetry(entry)}>Try again</button>`}
    ${!entry.streaming && html`<${Decision} d=${entry.decision} requestId=${entry.requestId ?? e?.requestId} me=${me} workspaceId=${workspaceId} />`}
  </article>`;
}

function Mine({ entry }) {
  const { text, files } = displayParts(entry.message.content);
  return html`<article class=${`msg mine${entry.kept ? '' : ' unsaved'}`} aria-label="Your message">
    ${text && html`<${Rich} text=${text} />`}
    <${Files} files=${files} />
  </article>`;
}

/** The list of messages; `ctx` carries me, workspaceId, busy and the answer/retry handlers. */
export function Thread({ entries, ctx }) {
  const shown = entries.filter((e) => e.role === 'user' || e.role === 'assistant');
  return html`<div class="thread">${shown.map((e) => (e.role === 'user' ? html`<${Mine} key=${e.id} entry=${e} />` : html`<${Reply} key=${e.id} entry=${e} ctx=${ctx} />`))}</div>`;
}
