import type { Decision } from './decide.js';

/** Most prompts kept per route (claimed) and for the default (fell to it), per workspace. */
export const RECENT_PER_LIST = 10;
/** Most workspaces tracked per replica (least recently routed dropped first). */
const MAX_WORKSPACES = 1000;
/** Longest prompt text kept, in characters. */
export const RECENT_TEXT_CHARS = 300;

export interface RecentDecision {
  request_id: string;
  at: string;
  rule: string;
  reason: string | null;
  confidence: number | null;
  /** Characters in the latest user message. */
  chars: number;
  /** The prompt's first RECENT_TEXT_CHARS characters; null unless the workspace records prompts. */
  text: string | null;
}

interface Lists {
  claimed: Map<string, RecentDecision[]>;
  fellToDefault: RecentDecision[];
}

/**
 * What `auto` decided lately, per workspace: per route the prompts it claimed, and the prompts
 * that went to the default model. In memory on each replica (what this replica saw), bounded:
 * RECENT_PER_LIST per list, MAX_WORKSPACES workspaces, texts cut to RECENT_TEXT_CHARS, and the
 * prompt's text kept only when the workspace records prompts (SPEC.md: prompts are stored only
 * where a workspace turned recording on); otherwise only its length, time, reason and confidence.
 */
export class RecentDecisions {
  private readonly workspaces = new Map<string, Lists>();

  record(workspaceId: string, requestId: string, d: Decision, text: string, keepText: boolean): void {
    if (d.rule !== 'classified' && d.rule !== 'signal' && d.rule !== 'default') return;
    let lists = this.workspaces.get(workspaceId);
    if (lists) this.workspaces.delete(workspaceId);
    else lists = { claimed: new Map(), fellToDefault: [] };
    this.workspaces.set(workspaceId, lists);
    if (this.workspaces.size > MAX_WORKSPACES) this.workspaces.delete(this.workspaces.keys().next().value!);
    const entry: RecentDecision = {
      request_id: requestId, at: new Date().toISOString(), rule: d.rule, reason: d.reason, confidence: d.confidence,
      chars: text.length, text: keepText ? text.slice(0, RECENT_TEXT_CHARS) : null,
    };
    let list: RecentDecision[];
    if (d.route) {
      list = lists.claimed.get(d.route) ?? [];
      lists.claimed.set(d.route, list);
    } else list = lists.fellToDefault;
    list.unshift(entry);
    if (list.length > RECENT_PER_LIST) list.pop();
  }

  view(workspaceId: string, routes: string[]): { claimed: Record<string, RecentDecision[]>; fell_to_default: RecentDecision[] } {
    const lists = this.workspaces.get(workspaceId);
    return {
      claimed: Object.fromEntries(routes.map((r) => [r, lists?.claimed.get(r) ?? []])),
      fell_to_default: lists?.fellToDefault ?? [],
    };
  }
}
