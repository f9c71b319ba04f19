import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { decideAfterClassifier, decideBeforeClassifier, latestUserText } from '../../plugins/routing/decide.js';
import { noSettings, type Route } from '../../plugins/routing/snapshot.js';

const test = suite('routing rules (pure)');
const t = { confidenceThreshold: 0.5, margin: 0.05, minChars: 12 };
const settings = { ...noSettings, defaultModel: 'p:default', codeRoute: 'code' };
const route = (name: string, over: Partial<Route> = {}): Route => ({
  workspaceId: 'ws', name, model: `p:${name}`, fallbacks: [], description: '', examples: [], enabled: true,
  confidenceThreshold: null, margin: null, minChars: null, version: 'v', createdAt: new Date(0), updatedAt: new Date(0), ...over,
});
const routes = [route('code'), route('sql'), route('writing', { confidenceThreshold: 0.8, margin: 0.2 })];
const scores = (...s: Array<[string, number]>) => ({ scores: s.map(([r, confidence]) => ({ route: r, confidence, centroid: 0, nearest: 0, lexical: 0, lexicalNearest: 0 })), none: 0 });
const text = 'Write a query that lists every customer with orders';

test('latest user message: the last user turn, text parts joined, attachments ignored', () => {
  assert.is(latestUserText([{ role: 'user', content: 'old' }, { role: 'assistant', content: 'x' }, { role: 'user', content: [{ type: 'text', text: 'a' }, { type: 'image_url', image_url: { url: 'data:' } }, { type: 'text', text: 'b' }] }, { role: 'tool', content: 'r', tool_call_id: 't' }]), 'a\nb');
  assert.is(latestUserText([{ role: 'system', content: 's' }]), '');
});

test('before the classifier: pinned, routing off, no routes, signal, too short, else ask', () => {
  assert.equal(decideBeforeClassifier(text, { ...settings, pinnedModel: 'p:pin', routingEnabled: false }, routes, t), { rule: 'pinned', route: null, model: 'p:pin', reason: null, confidence: null });
  assert.equal(decideBeforeClassifier(text, { ...settings, routingEnabled: false }, routes, t)?.reason, 'routing_off');
  assert.equal(decideBeforeClassifier(text, settings, [], t)?.reason, 'no_routes');
  assert.equal(decideBeforeClassifier('```\nx\n```', settings, routes, t), { rule: 'signal', route: 'code', model: null, reason: null, confidence: null });
  assert.equal(decideBeforeClassifier('~~~sql\nselect 1', settings, routes, t)?.rule, 'signal');
  assert.is(decideBeforeClassifier('use ``` to fence a block', settings, routes, t), null); // not at a line start: no signal
  assert.equal(decideBeforeClassifier('```\nx\n```', { ...settings, codeRoute: null }, routes, t)?.reason, 'too_short');
  assert.equal(decideBeforeClassifier('   tiny    ', settings, routes, t), { rule: 'default', route: null, model: 'p:default', reason: 'too_short', confidence: null });
  assert.is(decideBeforeClassifier(text, settings, routes, t), null);
});

test('after the classifier: classified, below_threshold, ambiguous, unavailable; per-route overrides', () => {
  assert.equal(decideAfterClassifier(text, scores(['sql', 0.9], ['code', 0.3]), settings, routes, t), { rule: 'classified', route: 'sql', model: null, reason: null, confidence: 0.9 });
  assert.equal(decideAfterClassifier(text, scores(['sql', 0.4], ['code', 0.1]), settings, routes, t), { rule: 'default', route: null, model: 'p:default', reason: 'below_threshold', confidence: 0.4 });
  assert.equal(decideAfterClassifier(text, scores(['sql', 0.62], ['code', 0.6]), settings, routes, t), { rule: 'default', route: null, model: 'p:default', reason: 'ambiguous', confidence: 0.62 });
  assert.equal(decideAfterClassifier(text, null, settings, routes, t), { rule: 'default', route: null, model: 'p:default', reason: 'classifier_unavailable', confidence: null });
  // writing asks for 0.8 and a 0.2 lead of its own.
  assert.equal(decideAfterClassifier(text, scores(['writing', 0.75], ['sql', 0.1]), settings, routes, t).reason, 'below_threshold');
  assert.equal(decideAfterClassifier(text, scores(['writing', 0.9], ['sql', 0.75]), settings, routes, t).reason, 'ambiguous');
  assert.equal(decideAfterClassifier(text, scores(['writing', 0.9], ['sql', 0.6]), settings, routes, t).route, 'writing');
  // A route's own min_chars: the best route cannot claim a message shorter than it asks for.
  const picky = [route('sql', { minChars: 100 }), route('code')];
  assert.equal(decideAfterClassifier(text, scores(['sql', 0.9], ['code', 0.1]), settings, picky, t).reason, 'too_short');
  // A single route has no second to be close to.
  assert.equal(decideAfterClassifier(text, scores(['sql', 0.55]), settings, [route('sql')], t).rule, 'classified');
});

test('the same inputs always give the same decision', () => {
  const a = decideAfterClassifier(text, scores(['sql', 0.7], ['code', 0.2]), settings, routes, t);
  assert.equal(decideAfterClassifier(text, scores(['sql', 0.7], ['code', 0.2]), settings, routes, t), a);
});

test.run();
