// The composer: message, model picker (exactly GET /v1/models), attachments by file button or
// drag and drop, Send while idle and Stop while a reply streams.
import { useRef, useState } from 'preact/hooks';
import { html } from '../ui.js';
import { accepted, readAttachment, tooMuch, userContent } from './attachments.js';

/** The picker's options: auto and the routes under "Routing", then the models. */
function ModelPicker({ models, value, onChange }) {
  const routing = models.filter((m) => m.id === 'auto' || m.id.startsWith('route/'));
  const plain = models.filter((m) => !routing.includes(m));
  const label = (m) => (m.id === 'auto' ? 'auto (workspace routing)' : m.id.startsWith('route/') ? m.id : m.svc?.display_name && m.svc.display_name !== m.id ? `${m.svc.display_name} (${m.id})` : m.id);
  return html`<div class="field model-pick">
    <label for="chat-model">Model</label>
    <select id="chat-model" value=${value} onChange=${(e) => onChange(e.currentTarget.value)}>
      <optgroup label="Routing">${routing.map((m) => html`<option value=${m.id}>${label(m)}</option>`)}</optgroup>
      ${plain.length > 0 && html`<optgroup label="Models">${plain.map((m) => html`<option value=${m.id}>${label(m)}</option>`)}</optgroup>`}
    </select>
  </div>`;
}

const size = (bytes) => (bytes < 1024 * 1024 ? `${Math.ceil(bytes / 1024)} KB` : `${(bytes / 1024 / 1024).toFixed(1)} MB`);

export function Composer({ models, model, onModel, busy, onSend, onStop, textRef }) {
  const [text, setText] = useState('');
  const [attachments, setAttachments] = useState([]);
  const [problem, setProblem] = useState(null);
  const [dragging, setDragging] = useState(false);
  const fileInput = useRef(null);

  const add = async (files) => {
    setProblem(null);
    const read = [];
    for (const f of files) {
      try {
        read.push(await readAttachment(f));
      } catch (err) {
        setProblem(err.message);
      }
    }
    setAttachments((list) => [...list, ...read]);
  };
  const submit = async (ev) => {
    ev.preventDefault();
    if (busy) return;
    if (!text.trim() && attachments.length === 0) return setProblem('Write a message or attach a file first.');
    const over = tooMuch(attachments);
    if (over) return setProblem(over);
    setProblem(null);
    const sent = { text, attachments, content: userContent(text.trim(), attachments), model };
    setText('');
    setAttachments([]);
    try {
      await onSend(sent);
    } catch (err) {
      // Not sent (e.g. the conversation could not be started): give the message back with the reason.
      setText(text);
      setAttachments(attachments);
      setProblem(err.message);
    }
    textRef.current?.focus();
  };
  const onKey = (ev) => {
    if (ev.key === 'Enter' && !ev.shiftKey && !ev.isComposing) submit(ev);
  };
  const drop = (ev) => {
    ev.preventDefault();
    setDragging(false);
    add([...(ev.dataTransfer?.files ?? [])]);
  };
  return html`<form class=${`composer${dragging ? ' dragging' : ''}`} onSubmit=${submit} aria-label="Write a message"
      onDragOver=${(e) => { e.preventDefault(); setDragging(true); }} onDragLeave=${() => setDragging(false)} onDrop=${drop}>
    <div class="field">
      <label for="chat-text">Message</label>
      <textarea id="chat-text" ref=${textRef} rows="3" value=${text} onInput=${(e) => setText(e.currentTarget.value)} onKeyDown=${onKey}
        aria-describedby="chat-text-hint${problem ? ' chat-problem' : ''}" />
      <p class="hint" id="chat-text-hint">Enter sends, Shift+Enter starts a new line. Drop images, PDFs or text files here to attach them (10 MB each, 20 MB a message).</p>
    </div>
    ${attachments.length > 0 && html`<ul class="files" aria-label="Attached to this message">${attachments.map((a, i) => html`<li>
      <span class="file-kind">${a.kind === 'image' ? 'Image' : a.kind === 'pdf' ? 'PDF' : 'Text'}</span> ${a.name} (${size(a.size)})
      <button type="button" class="link" aria-label=${`Remove ${a.name}`} onClick=${() => setAttachments((l) => l.filter((_, j) => j !== i))}>Remove</button>
    </li>`)}</ul>`}
    ${problem && html`<p class="error" id="chat-problem" role="alert">${problem}</p>`}
    <div class="composer-bar">
      <${ModelPicker} models=${models} value=${model} onChange=${onModel} />
      <input type="file" ref=${fileInput} multiple accept=${accepted} hidden onChange=${(e) => { add([...e.currentTarget.files]); e.currentTarget.value = ''; }} />
      <button type="button" onClick=${() => fileInput.current.click()}>Attach files</button>
      ${busy ? html`<button type="button" class="danger" onClick=${onStop}>Stop</button>` : html`<button type="submit">Send</button>`}
    </div>
  </form>`;
}
