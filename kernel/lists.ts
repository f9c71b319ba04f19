/**
 * `list` with `item` added at its end: a list of one when `list` is missing or empty (an empty
 * list, possibly a shared frozen one, is replaced, not grown), else `list` itself, pushed onto.
 * V8 gives an empty list room for sixteen at its first push (~150 bytes); the request path keeps
 * many lists that most requests fill with one item (attempt records, model calls, reservations,
 * a reply's bytes).
 *
 * @example
 * outcome.attempts = withItem(outcome.attempts, record);
 */
export function withItem<T>(list: T[] | undefined, item: T): T[] {
  if (list === undefined || list.length === 0) return [item];
  list.push(item);
  return list;
}
