// A workspace's recording of prompts and replies (recording plugin): on or off, and days kept.
import { useState } from 'preact/hooks';
import { api, seg } from '../api.js';
import { html, useLoad, useForm, Form, Field, Loaded, Notice } from '../ui.js';

function RecordingForm({ path, setting, reload }) {
  const form = useForm({ enabled: setting.enabled, days: String(setting.days) });
  const [saved, setSaved] = useState(false);
  return html`<${Form} form=${form} class="short-inputs" title="Recording of prompts and replies" submitLabel="Save recording" onSubmit=${async (v) => {
    setSaved(false);
    // What was typed goes to the API as a number where it is one, so its refusal names the field.
    const days = v.days.trim() === '' || Number.isNaN(Number(v.days)) ? v.days : Number(v.days);
    await api('PUT', path, { enabled: v.enabled, days });
    setSaved(true);
    reload();
  }}>
    <p class="hint">Off by default. When on, each request's messages (attachments only as type and size) and its reply are kept for
      the days set, then deleted by the retention job. Traces, usage records and logs never hold text either way.</p>
    <${Field} form=${form} name="enabled" label="Record prompts and replies in this workspace" type="checkbox" />
    <${Field} form=${form} name="days" label="Days kept (1 to 90)" type="number" min="1" max="90" step="1" />
    ${saved && html`<${Notice}>Recording settings saved.</${Notice}>`}
  </${Form}>`;
}

/** The recording settings of one workspace (its admins and instance admins). */
export function Recording({ workspaceId }) {
  const path = `/workspaces/${seg(workspaceId)}/recording`;
  const setting = useLoad(() => api('GET', path), [path]);
  return html`<${Loaded} state=${setting}>${(s) => html`<${RecordingForm} path=${path} setting=${s} reload=${setting.reload} />`}</${Loaded}>`;
}
