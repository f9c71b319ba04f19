// One conversation's exchange: its history, sending (streamed), Stop, tool approvals, Try again.
// What the page resends as `messages` is the history the service kept (the Chat Completions way:
// clients resend earlier messages); an exchange that failed or was stopped is shown but not kept.
import { useEffect, useRef, useState } from 'preact/hooks';
import { api, seg } from '../api.js';
import { ChatError, streamReply } from './model-api.js';

let seq = 0;
const newId = () => `e${++seq}`;
const textOf = (content) => (typeof content === 'string' ? content : (content ?? []).map((p) => p.text ?? '').join(''));
const pendingKey = (conversationId) => `svc-chat-pending:${conversationId}`;

/** History rows of GET …/conversations/{id} as entries; a waiting approval (this tab's) is put back on its reply. */
function savedPending(conversationId) {
  try {
    return JSON.parse(sessionStorage.getItem(pendingKey(conversationId)) ?? 'null');
  } catch {
    return null; // not ours or damaged: the approval is simply not shown again
  }
}

function fromHistory(conversationId, rows) {
  const saved = savedPending(conversationId);
  return rows.map((m) => {
    const base = { id: newId(), role: m.message.role, message: m.message, kept: true, requestId: m.request_id };
    if (m.message.role !== 'assistant') return base;
    const pending = saved && saved.requestId === m.request_id ? saved.pending : null;
    return { ...base, content: textOf(m.message.content), decision: m.model ? { model: m.model } : null, pending };
  });
}

/** The messages of a new request: every kept message (tool and system ones too), in order. */
const kept = (entries) => entries.filter((e) => e.kept).map((e) => e.message);

/** What an approval's answer resends: the stopped request's messages, i.e. the kept ones up to the last user message. */
function upToLastUser(entries) {
  const messages = kept(entries);
  let i = messages.length - 1;
  while (i >= 0 && messages[i].role !== 'user') i--;
  return messages.slice(0, i + 1);
}

/** A title for a new conversation from its first message. */
function titleFrom(text, attachments) {
  const line = text.trim().split('\n')[0] ?? '';
  const t = line || attachments[0]?.name || '';
  return t.length > 60 ? `${t.slice(0, 59)}…` : t || null;
}

export function useChat({ workspaceId, conversationId, onCreated }) {
  const [entries, setEntries] = useState([]);
  const [state, setState] = useState({ loading: false, error: null });
  const [busy, setBusy] = useState(false);
  const [announce, setAnnounce] = useState('');
  const current = useRef({ workspaceId: null, conversationId: null });
  const controller = useRef(null);

  useEffect(() => {
    const same = current.current.workspaceId === workspaceId && current.current.conversationId === conversationId;
    if (same) return; // e.g. the conversation this hook just created
    controller.current?.abort();
    current.current = { workspaceId, conversationId };
    setEntries([]);
    setState({ loading: !!conversationId, error: null });
    if (!conversationId) return;
    api('GET', `/workspaces/${seg(workspaceId)}/conversations/${seg(conversationId)}`).then(
      (c) => current.current.conversationId === conversationId && (setEntries(fromHistory(conversationId, c.messages)), setState({ loading: false, error: null })),
      (error) => setState({ loading: false, error }),
    );
  }, [workspaceId, conversationId]);

  const patch = (id, fn) => setEntries((list) => list.map((e) => (e.id === id ? { ...e, ...fn(e) } : e)));

  /** Runs one request and streams its reply into a new assistant entry. */
  async function run({ messages, model, answer, userEntryId }) {
    const convId = current.current.conversationId;
    const reply = { id: newId(), role: 'assistant', content: '', streaming: true, decision: null, requestId: null, asked: model, kept: false, userEntryId };
    setEntries((list) => [...list, reply]);
    setBusy(true);
    setAnnounce('Waiting for the reply…');
    const abort = (controller.current = new AbortController());
    let content = '';
    let failed = null;
    let pending = null;
    try {
      const r = await streamReply({ workspaceId, conversationId: convId, model, messages, answer, signal: abort.signal });
      patch(reply.id, () => ({ decision: r.decision, requestId: r.requestId }));
      for await (const ev of r.events) {
        if (ev.text) {
          content += ev.text;
          patch(reply.id, () => ({ content }));
        }
        if (ev.pending) {
          pending = ev.pending;
          sessionStorage.setItem(pendingKey(convId), JSON.stringify({ requestId: r.requestId, pending: ev.pending }));
          patch(reply.id, () => ({ pending: ev.pending }));
        }
        if (ev.error) failed = ev.error;
      }
      if (failed) throw failed;
      // Kept by the service now: the request's user message and this reply are history.
      setEntries((list) => list.map((e) => (e.id === userEntryId ? { ...e, kept: true } : e.id === reply.id ? { ...e, kept: true, message: { role: 'assistant', content } } : e)));
      setAnnounce(pending ? `Approval needed: the assistant wants to run ${pending.tool}.` : 'The reply is complete.');
    } catch (err) {
      if (abort.signal.aborted) {
        patch(reply.id, () => ({ stopped: true }));
        setAnnounce('Stopped.');
      } else if (err instanceof ChatError) {
        patch(reply.id, () => ({ error: err }));
        setAnnounce('');
      } else throw err;
    } finally {
      patch(reply.id, () => ({ streaming: false }));
      if (controller.current === abort) controller.current = null;
      setBusy(false);
    }
  }

  /** Sends a user message (starting the conversation first when none is open). */
  async function send({ text, attachments, content, model }) {
    if (busy) return;
    if (!current.current.conversationId) {
      const c = await api('POST', `/workspaces/${seg(workspaceId)}/conversations`, { title: titleFrom(text, attachments) });
      current.current = { workspaceId, conversationId: c.id };
      onCreated(c.id);
    }
    const user = { id: newId(), role: 'user', message: { role: 'user', content }, kept: false };
    const context = kept(entries);
    // A waiting approval can no longer be answered once a new message follows it.
    setEntries((list) => [...list.map((e) => (e.pending && !e.answered ? { ...e, answered: 'skipped' } : e)), user]);
    sessionStorage.removeItem(pendingKey(current.current.conversationId));
    await run({ messages: [...context, user.message], model, userEntryId: user.id });
  }

  /** Answers the waiting tool call of `entry`: 'approve', 'always' or 'deny'; the reply streams on. */
  async function answer(entry, how, model) {
    if (busy) return;
    patch(entry.id, () => ({ answered: how }));
    sessionStorage.removeItem(pendingKey(current.current.conversationId));
    const id = entry.pending.id;
    const a = how === 'deny' ? { deny: id } : { approve: id, always: how === 'always' };
    await run({ messages: upToLastUser(entries), model: entry.asked ?? model, answer: a });
  }

  /** Sends a failed or stopped message again (it was not kept). */
  async function retry(reply, model) {
    const user = entries.find((e) => e.id === reply.userEntryId);
    if (!user || busy) return;
    setEntries((list) => list.filter((e) => e.id !== reply.id && e.id !== user.id));
    const context = kept(entries);
    const again = { ...user, id: newId() };
    setEntries((list) => [...list, again]);
    await run({ messages: [...context, again.message], model: reply.asked ?? model, userEntryId: again.id });
  }

  const stop = () => controller.current?.abort();
  return { entries, state, busy, announce, send, answer, retry, stop };
}
