// Shared building blocks of every page: forms that show the API's message next to its field,
// paged tables, empty states, confirmation dialogs, money and time formats.
import { h } from 'preact';
import { useEffect, useRef, useState, useCallback } from 'preact/hooks';
import htm from 'htm';
import { ApiError } from './api.js';

export const html = htm.bind(h);

/** micro-USD (integer) as dollars: $0.000125, $12.50. */
export function money(micro) {
  const usd = Number(micro ?? 0) / 1e6;
  return usd !== 0 && Math.abs(usd) < 0.01 ? `$${usd.toFixed(6).replace(/0+$/, '')}` : `$${usd.toFixed(2)}`;
}

/** A provider check's result as the spec names it on the provider's row. */
export const checkLabels = { connected: 'Connected', could_not_connect: 'Could not connect', key_refused: 'Key refused', unchecked: 'Not checked' };
export const CheckBadge = ({ check }) => html`<span class=${`badge ${check}`}>${checkLabels[check] ?? check}</span>`;

/** An ISO time as the browser's local date and time, or a dash. */
export const when = (iso) => (iso ? new Date(iso).toLocaleString() : '—');

/**
 * Loads data with `load()` when `deps` change; `reload()` loads again and resolves once the new
 * data (or error) is in the state, so a page can say "removed." only after the list shows it.
 */
export function useLoad(load, deps = []) {
  const [state, setState] = useState({ data: null, error: null, loading: true });
  const run = useCallback(() => {
    setState((s) => ({ ...s, loading: true }));
    return load().then((data) => setState({ data, error: null, loading: false }), (error) => setState({ data: null, error, loading: false }));
  }, deps);
  useEffect(() => void run(), [run]);
  return { ...state, reload: run };
}

/** Schema wording the API may answer with for a malformed field, as a sentence for people. */
const schemaWords = [
  [/Expected (?:integer|number) to be (greater|less) (?:than )?or equal to (-?[\d.]+)/, (m) => `Enter a number ${m[1] === 'greater' ? 'of at least' : 'of at most'} ${m[2]}.`],
  [/Expected string length (greater|less) (?:than )?or equal to (\d+)/, (m) => (m[1] === 'greater' ? (m[2] === '1' ? 'Fill this in.' : `Use at least ${m[2]} characters.`) : `Use at most ${m[2]} characters.`)],
  [/Expected required property/, 'Fill this in.'],
  [/Expected integer/, 'Enter a whole number.'],
  [/Expected (number|union value)/, 'Enter a number.'],
  [/Expected string to match/, 'This has characters that are not allowed here; see the hint.'],
  [/Expected boolean/, 'Choose yes or no.'],
  [/Expected (array|string|object)/, 'This value has the wrong form.'],
  [/Unexpected property/, 'This field is not taken here.'],
];

/** The API's message for a field, without the `param: ` prefix and never in schema or regex wording. */
export function humanize(message, param) {
  let m = String(message ?? '');
  for (const [re, text] of schemaWords) {
    const hit = re.exec(m);
    if (hit) return typeof text === 'function' ? text(hit) : text;
  }
  // "name: use lowercase letters…" → "Use lowercase letters…"; messages naming their field otherwise stay as written.
  if (param && m.startsWith(`${param}: `)) m = m.charAt(param.length + 2).toUpperCase() + m.slice(param.length + 3);
  return m;
}

/**
 * Form state: values, an error per field, one form-level error, a success notice, busy.
 * `check(values)` (optional) returns `{ field: message }` for what the browser can see is wrong:
 * every such error shows at once, next to its field, and nothing is sent. `submit(fn)` then runs
 * fn(values); a returned string shows as a confirmation; an ApiError naming a field shows beside it.
 */
export function useForm(initial, check) {
  const [values, setValues] = useState(initial);
  const [errors, setErrors] = useState({});
  const [formError, setFormError] = useState(null);
  const [notice, setNotice] = useState(null);
  const [busy, setBusy] = useState(false);
  const ref = useRef(null);
  const set = (name, value) => setValues((v) => ({ ...v, [name]: value }));
  const focus = (field) => setTimeout(() => ref.current?.querySelector(`[name="${field}"]`)?.focus(), 0);
  const submit = (fn) => async (ev) => {
    ev.preventDefault();
    setErrors({});
    setFormError(null);
    setNotice(null);
    const found = Object.fromEntries(Object.entries(check?.(values) ?? {}).filter(([, m]) => m));
    if (Object.keys(found).length > 0) {
      setErrors(found);
      focus(Object.keys(values).find((k) => found[k]) ?? Object.keys(found)[0]);
      return;
    }
    setBusy(true);
    try {
      const done = await fn(values);
      if (typeof done === 'string') setNotice(done);
    } catch (err) {
      if (!(err instanceof ApiError)) throw err;
      const field = fieldOf(err.param, Object.keys(values));
      if (field) {
        setErrors({ [field]: humanize(err.message, err.param) });
        focus(field);
      } else setFormError(humanize(err.message, err.param));
    } finally {
      setBusy(false);
    }
  };
  return { values, set, errors, formError, notice, busy, submit, ref, reset: () => setValues(initial), setValues };
}

/** The form field an API `param` names: exact, or the first part of a dotted path. */
function fieldOf(param, fields) {
  if (!param) return null;
  if (fields.includes(param)) return param;
  const head = param.split('.')[0];
  const under = param.replace('.', '_');
  return fields.includes(under) ? under : fields.includes(head) ? head : null;
}

let nextId = 0;
const useId = () => useRef(`f${++nextId}`).current;

/** A labelled input bound to a form; `type: 'checkbox' | 'select' | 'textarea'` or any input type. */
export function Field({ form, name, label, hint, type = 'text', options, ...rest }) {
  const id = useId();
  const error = form.errors[name];
  const describedBy = [hint ? `${id}-hint` : '', error ? `${id}-err` : ''].filter(Boolean).join(' ') || undefined;
  const common = { id, name, 'aria-invalid': error ? 'true' : undefined, 'aria-describedby': describedBy, ...rest };
  let control;
  if (type === 'checkbox') {
    control = html`<input type="checkbox" ...${common} checked=${!!form.values[name]} onChange=${(e) => form.set(name, e.currentTarget.checked)} />`;
  } else if (type === 'select') {
    control = html`<select ...${common} value=${form.values[name]} onChange=${(e) => form.set(name, e.currentTarget.value)}>
      ${options.map(([v, text]) => html`<option value=${v}>${text}</option>`)}
    </select>`;
  } else if (type === 'textarea') {
    control = html`<textarea ...${common} rows="4" value=${form.values[name] ?? ''} onInput=${(e) => form.set(name, e.currentTarget.value)} />`;
  } else {
    control = html`<input type=${type} ...${common} value=${form.values[name] ?? ''} onInput=${(e) => form.set(name, e.currentTarget.value)} />`;
  }
  return html`<div class=${`field ${type === 'checkbox' ? 'check' : ''}`}>
    ${type === 'checkbox' ? html`${control}<label for=${id}>${label}</label>` : html`<label for=${id}>${label}</label>${control}`}
    ${hint && html`<p class="hint" id=${`${id}-hint`}>${hint}</p>`}
    ${error && html`<p class="error" id=${`${id}-err`}>${error}</p>`}
  </div>`;
}

/** A form with its heading, the form-level error and a submit button. */
export function Form({ form, onSubmit, title, submitLabel, children, class: cls = '', cancel = null }) {
  const count = Object.keys(form.errors).length;
  return html`<form class=${`card ${cls}`} ref=${form.ref} onSubmit=${form.submit(onSubmit)} noValidate>
    ${title && html`<h2>${title}</h2>`}
    ${count > 1 && html`<p class="error" role="alert">Check the ${count} fields marked below.</p>`}
    ${children}
    ${form.formError && html`<p class="error" role="alert">${form.formError}</p>`}
    <button type="submit" disabled=${form.busy}>${form.busy ? 'Working…' : submitLabel}</button>
    ${cancel}
    ${form.notice && html`<p class="notice" role="status">${form.notice}</p>`}
  </form>`;
}

/** A status message read out by screen readers. */
export const Notice = ({ children }) => html`<p class="notice" role="status">${children}</p>`;

/** What to show when a list is empty: what it is and the next step. */
export const Empty = ({ children }) => html`<div class="empty"><p>${children}</p></div>`;

/** Loading and error states of a useLoad result; renders `children(data)` when loaded. */
export function Loaded({ state, children }) {
  if (state.error) return html`<p class="error" role="alert">${state.error.message}</p>`;
  if (!state.data) return html`<p class="loading" role="status">Loading…</p>`;
  return children(state.data);
}

export { Paged, useCursors, CursorPager, SearchBox } from './lists.js';

/**
 * A button that asks first in a modal dialog; `onConfirm` may throw an ApiError, shown in it.
 * `question` is text, or an async function returning it (e.g. after asking what else uses the thing).
 */
export function ConfirmButton({ label, question, confirmLabel = label, onConfirm, class: cls = 'danger', text = label }) {
  const dialog = useRef(null);
  const qid = useId();
  const [error, setError] = useState(null);
  const [asked, setAsked] = useState(typeof question === 'function' ? '' : question);
  const yes = async () => {
    try {
      await onConfirm();
      dialog.current?.close();
    } catch (err) {
      setError(err.message);
    }
  };
  const open = async () => {
    setError(null);
    if (typeof question === 'function') setAsked(await question().catch((err) => err.message));
    dialog.current.showModal();
  };
  return html`<button type="button" class=${cls} aria-label=${text !== label ? label : undefined} onClick=${open}>${text}</button>
    <dialog ref=${dialog} aria-labelledby=${qid}>
      <div id=${qid}>${asked}</div>
      ${error && html`<p class="error" role="alert">${error}</p>`}
      <div class="actions">
        <button type="button" onClick=${() => dialog.current.close()}>Cancel</button>
        <button type="button" class="danger" onClick=${yes}>${confirmLabel}</button>
      </div>
    </dialog>`;
}

/** A button opening a modal dialog that holds `children(close)` (an edit form). */
export function DialogButton({ label, text = label, title, children, class: cls = '' }) {
  const dialog = useRef(null);
  const tid = useId();
  const [open, setOpen] = useState(false);
  const close = () => { dialog.current?.close(); setOpen(false); };
  return html`<button type="button" class=${cls} aria-label=${text !== label ? label : undefined} onClick=${() => { setOpen(true); setTimeout(() => dialog.current?.showModal(), 0); }}>${text}</button>
    <dialog ref=${dialog} class="wide" aria-labelledby=${tid} onClose=${() => setOpen(false)}>
      <h2 id=${tid}>${title ?? label}</h2>
      ${open && children(close)}
    </dialog>`;
}
