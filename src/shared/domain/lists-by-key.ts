/**
 * Adds `item` to the list `lists` holds under `key`, in place. Copying the
 * list on each item (`set(key, [...(get(key) ?? []), item])`) is quadratic in
 * the items of one key: a card in 30 000 groups took half a minute to read.
 */
export function appendTo<K, V>(lists: Map<K, V[]>, key: K, item: V): void {
  const list = lists.get(key);
  if (list) list.push(item);
  else lists.set(key, [item]);
}
