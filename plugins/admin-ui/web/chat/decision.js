// What decided a reply (SPEC.md Response headers), in words, with the link to its trace.
import { html } from '../ui.js';
import { seg } from '../api.js';

const reasons = {
  routing_off: 'routing is turned off in this workspace',
  no_routes: 'the workspace has no routes',
  too_short: 'the message was too short to classify',
  classifier_unavailable: 'the classifier was unavailable',
  below_threshold: 'no route matched with enough confidence',
  ambiguous: 'two routes matched about equally',
};

const scopes = { instance: 'the instance budget', workspace: "the workspace's budget", member: 'your budget in this workspace', key: "the key's budget" };

/** One sentence on how the model was chosen, from x-svc-routing-rule and its companions. */
export function ruleSentence(d) {
  const route = d.route ? `route/${d.route}` : null;
  switch (d.rule) {
    case 'explicit': return route ? `You picked ${route}.` : 'You picked this model.';
    case 'sticky': return `Kept from this conversation's first routing decision${route ? ` (${route})` : ''}.`;
    case 'pinned': return 'The workspace pins every request to this model.';
    case 'signal': return `A signal in the message (such as a code block) sent it to ${route ?? 'a route'}.`;
    case 'classified': return `The classifier matched ${route ?? 'a route'}.`;
    case 'default': return `The workspace's default model: ${reasons[d.reason] ?? 'no route claimed the message'}.`;
    default: return null;
  }
}

/** Where the request's trace is, for those who may read it (workspace admins, instance admins). */
export function traceHref(me, workspaceId, requestId) {
  const role = me.workspaces.find((w) => w.id === workspaceId)?.role;
  if (role === 'admin') return `#/requests/${seg(requestId)}/${seg(workspaceId)}`;
  return me.person.instance_admin ? `#/requests/${seg(requestId)}` : null;
}

/** The reply's model and a details disclosure: rule, route, reason, confidence, budget fallback, trace. */
export function Decision({ d, requestId, me, workspaceId }) {
  if (!d && !requestId) return null;
  const href = requestId ? traceHref(me, workspaceId, requestId) : null;
  const rule = d ? ruleSentence(d) : null;
  return html`<details class="decision">
    <summary>${d?.model ? html`Answered by <code>${d.model}</code>` : 'Details'}${d?.route ? html` · <code>route/${d.route}</code>` : ''}${d?.rule ? ` · ${d.rule}` : ''}${d?.fallbackFrom ? ' · cheaper model (budget)' : ''}</summary>
    <dl class="facts">
      ${rule && html`<dt>Why this model</dt><dd>${rule}</dd>`}
      ${d?.rule && html`<dt>Routing rule</dt><dd><code>${d.rule}</code></dd>`}
      ${d?.route && html`<dt>Route</dt><dd><code>route/${d.route}</code></dd>`}
      ${d?.reason && html`<dt>Reason</dt><dd><code>${d.reason}</code></dd>`}
      ${d?.confidence !== null && d?.confidence !== undefined && html`<dt>Confidence</dt><dd>${d.confidence.toFixed(2)}</dd>`}
      ${d?.fallbackFrom && html`<dt>Budget fallback</dt><dd>A budget sent this to a cheaper model: <code>${d.fallbackFrom}</code> would have answered, but ${scopes[d.fallbackScope] ?? d.fallbackScope} had no room for it.</dd>`}
      ${requestId && html`<dt>Request</dt><dd>${href ? html`<a href=${href}>Trace of request <code>${requestId}</code></a>` : html`<code>${requestId}</code> (a workspace admin finds its trace under Requests)`}</dd>`}
    </dl>
  </details>`;
}
