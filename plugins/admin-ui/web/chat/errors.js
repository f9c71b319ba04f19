// Errors of the model API as sentences a person understands (never the raw JSON): the spec's
// codes with their `svc` details; anything else falls back to the API's own message, which is
// written for people (SPEC.md Errors: "message is for people; clients branch on code").
import { money } from '../ui.js';

/** A cap scope (SPEC.md budget_exceeded `scope`) in words. */
const scopes = {
  instance: 'The instance-wide budget',
  workspace: "This workspace's budget",
  member: 'Your budget in this workspace',
  key: "This key's budget",
};

/** A wait in seconds as words: "12 seconds", "about 3 minutes", "about 2 hours". */
export function wait(seconds) {
  const s = Math.max(1, Math.ceil(Number(seconds) || 0));
  if (s < 90) return `${s} second${s === 1 ? '' : 's'}`;
  if (s < 90 * 60) return `about ${Math.round(s / 60)} minutes`;
  return `about ${Math.round(s / 3600)} hour${Math.round(s / 3600) === 1 ? '' : 's'}`;
}

const provider = (svc) => (svc.provider ? `The provider ${svc.provider}` : 'The provider');

const sentences = {
  budget_exceeded: (e) => {
    const who = scopes[e.svc.scope] ?? 'A budget';
    const room = e.svc.remaining_micro_usd !== undefined ? ` It has ${money(e.svc.remaining_micro_usd)} left` : '';
    const need = e.svc.required_micro_usd !== undefined ? `${room ? ', and this' : ' This'} request needed up to ${money(e.svc.required_micro_usd)}` : '';
    return `${who} has no room for this request, even on a cheaper model.${room}${need}${room || need ? '.' : ''} Nothing was sent; try again when the budget resets or an admin raises it.`;
  },
  rate_limited: (e) =>
    `You have started more requests than your rate limit allows (your chat and your API keys share it). Nothing was sent; try again in ${wait(e.retryAfter ?? 1)}.`,
  upstream_unavailable: (e) =>
    e.svc.rate_limited
      ? `${provider(e.svc)} is turning requests away for its own rate limit. Try again in ${wait(e.svc.retry_after_seconds ?? 5)}.`
      : `${provider(e.svc)} did not answer in time. Try again in a moment.`,
  provider_auth_failed: (e) => `${provider(e.svc)} refused the service's key. An admin must fix the provider's key; trying again will not help.`,
  provider_billing: (e) => `${provider(e.svc)} refused because of its account's billing (usually no credit left). An admin must check the provider's account.`,
  provider_model_not_found: (e) => `${provider(e.svc)} does not know this model${e.svc.model ? ` (${e.svc.model})` : ''}. An admin must correct the model's id.`,
  stream_interrupted: () => 'The reply broke off before it was finished, so it is not kept in the conversation. Try again.',
  server_shutting_down: () => 'The service is restarting and the reply was cut off, so it is not kept in the conversation. Try again in a moment.',
  access_revoked: () => 'Your access was removed while this reply was being written, so it stopped here. Ask a workspace admin if that is unexpected.',
  budget_unavailable: () => 'Budgets and the rate limit cannot be checked right now, so nothing was sent. Try again shortly.',
  context_length_exceeded: () => 'This conversation is now too long for the model. Start a new conversation, or pick a model with a larger context window.',
  no_model: () => 'No route claimed this message and the workspace has no default model. Pick a model, or ask a workspace admin to set a default.',
  internal_error: () => 'Something failed on the service side. Try again; if it keeps failing, give an admin the request id below.',
  invalid_api_key: () => 'Your session has ended. Sign in again.',
  network: (e) => e.message,
};

/** Codes worth a "Try again" button (the spec's Retry column, plus a reply cut off mid-way). */
export const retryable = new Set(['rate_limited', 'upstream_unavailable', 'stream_interrupted', 'server_shutting_down', 'budget_unavailable', 'internal_error', 'network']);

/** The sentence for a ChatError. */
export function sentence(err) {
  const say = sentences[err.code];
  if (say) return say(err);
  if (err.shapeless && err.status === 503) return 'The service is restarting or cannot serve right now. Try again in a moment.';
  return err.message;
}

/** Whether offering to send the same message again makes sense for this error. */
export const canRetry = (err) => retryable.has(err.code) || (err.shapeless && err.status === 503);
