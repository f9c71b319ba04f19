import type { ChatMessage, KeptDecision } from '../../kernel/index.js';
import type { Classification } from './classifier/contract.js';
import type { Route, WorkspaceRouting } from './snapshot.js';

/** The thresholds of the rules; each route may override them. */
export interface Thresholds {
  confidenceThreshold: number;
  margin: number;
  minChars: number;
}

export type Decision = KeptDecision;

/** An opening code fence (``` or ~~~, up to three spaces in, as CommonMark has it) followed by a line. */
const fence = /(?:^|\n)[ \t]{0,3}(?:`{3,}|~{3,})[^\n`]*\n/;

/** The text routing reads: the latest user message's text (its text parts joined; attachments ignored). */
export function latestUserText(messages: ChatMessage[]): string {
  for (let i = messages.length - 1; i >= 0; i--) {
    const m = messages[i]!;
    if (m.role !== 'user') continue;
    if (typeof m.content === 'string') return m.content;
    if (Array.isArray(m.content)) return m.content.map((p) => (p.type === 'text' ? p.text : '')).filter(Boolean).join('\n');
    return '';
  }
  return '';
}

const toDefault = (settings: WorkspaceRouting, reason: string, confidence: number | null = null): Decision => ({
  rule: 'default',
  route: null,
  model: settings.defaultModel,
  reason,
  confidence,
});

const minCharsOf = (r: Route, t: Thresholds): number => r.minChars ?? t.minChars;

/**
 * The rules of `auto` up to the classifier (SPEC.md Model selection), in the order:
 * pinned → routing off → no enabled routes → signal → too short. Returns null when the classifier
 * must be asked. Pure: the same inputs always give the same decision.
 */
export function decideBeforeClassifier(text: string, settings: WorkspaceRouting, enabled: Route[], t: Thresholds): Decision | null {
  if (settings.pinnedModel) return { rule: 'pinned', route: null, model: settings.pinnedModel, reason: null, confidence: null };
  if (!settings.routingEnabled) return toDefault(settings, 'routing_off');
  if (enabled.length === 0) return toDefault(settings, 'no_routes');
  const code = settings.codeRoute ? enabled.find((r) => r.name === settings.codeRoute) : undefined;
  if (code && fence.test(text)) return { rule: 'signal', route: code.name, model: null, reason: null, confidence: null };
  // No route could claim a message shorter than every route's minimum.
  const length = text.trim().length;
  if (enabled.every((r) => length < minCharsOf(r, t))) return toDefault(settings, 'too_short');
  return null;
}

/**
 * The rules after the classifier: `classified` when the best route clears its threshold and leads
 * the second by its margin; else the default with `below_threshold` or `ambiguous` (confidence
 * kept, since the classifier was asked); `classifier_unavailable` when it could not be asked.
 */
export function decideAfterClassifier(text: string, result: Classification | null, settings: WorkspaceRouting, enabled: Route[], t: Thresholds): Decision {
  if (!result) return toDefault(settings, 'classifier_unavailable');
  const [top, second] = result.scores;
  const route = top && enabled.find((r) => r.name === top.route);
  if (!top || !route) return toDefault(settings, 'below_threshold', top ? top.confidence : null);
  if (text.trim().length < minCharsOf(route, t)) return toDefault(settings, 'too_short');
  if (top.confidence < (route.confidenceThreshold ?? t.confidenceThreshold)) return toDefault(settings, 'below_threshold', top.confidence);
  if (second && top.confidence - second.confidence < (route.margin ?? t.margin)) return toDefault(settings, 'ambiguous', top.confidence);
  return { rule: 'classified', route: route.name, model: null, reason: null, confidence: top.confidence };
}
