/** A plugin as far as ordering is concerned. */
export interface OrderNode { name: string; dependsOn?: string[] }

/**
 * Orders plugins so each comes after its dependencies; ties keep the config's order (no numeric
 * priorities). Throws with a clear message on an unknown dependency or a cycle.
 *
 * @example
 * orderPlugins([{ name: 'b', dependsOn: ['a'] }, { name: 'a' }]) // → a, b
 */
export function orderPlugins<T extends OrderNode>(nodes: T[]): T[] {
  const byName = new Map(nodes.map((n) => [n.name, n]));
  for (const n of nodes) {
    for (const dep of n.dependsOn ?? []) {
      if (!byName.has(dep)) throw new Error(`plugin "${n.name}" depends on "${dep}", which is not configured or is disabled`);
    }
  }
  const out: T[] = [];
  const state = new Map<string, 'visiting' | 'done'>();
  const visit = (n: T, path: string[]): void => {
    const s = state.get(n.name);
    if (s === 'done') return;
    if (s === 'visiting') {
      const cycle = [...path.slice(path.indexOf(n.name)), n.name];
      throw new Error(`plugin dependency cycle: ${cycle.join(' -> ')}`);
    }
    state.set(n.name, 'visiting');
    for (const dep of n.dependsOn ?? []) visit(byName.get(dep)!, [...path, n.name]);
    state.set(n.name, 'done');
    out.push(n);
  };
  for (const n of nodes) visit(n, []);
  return out;
}
