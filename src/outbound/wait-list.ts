/** The links a waiter carries while it is in a {@link WaitList}. */
export interface Linked<T extends Linked<T>> {
  /** The list the item is in, or undefined. */
  list: WaitList<T> | undefined;
  prev: T | undefined;
  next: T | undefined;
}

/**
 * A first-in-first-out list linked through its items, so that taking any item out (an abort, a
 * deadline) costs O(1): with an array, an abort storm of n waiters cost n scans of n entries.
 */
export class WaitList<T extends Linked<T>> {
  head: T | undefined = undefined;
  private tail: T | undefined = undefined;
  /** Items in the list. */
  size = 0;

  /** Appends `item` (not in any list). */
  push(item: T): void {
    this.link(item, this.tail, undefined);
  }

  /** Puts `items` at the front, in their order. */
  unshiftAll(items: readonly T[]): void {
    for (let i = items.length - 1; i >= 0; i--) this.link(items[i] as T, undefined, this.head);
  }

  /** Takes `item` out if it is in this list; returns whether it was. */
  remove(item: T): boolean {
    if (item.list !== this) return false;
    if (item.prev === undefined) this.head = item.next;
    else item.prev.next = item.next;
    if (item.next === undefined) this.tail = item.prev;
    else item.next.prev = item.prev;
    item.list = undefined;
    item.prev = undefined;
    item.next = undefined;
    this.size--;
    return true;
  }

  /** The items in order, read as a snapshot: the caller may remove any of them while iterating. */
  toArray(): T[] {
    const items: T[] = [];
    for (let item = this.head; item !== undefined; item = item.next) items.push(item);
    return items;
  }

  private link(item: T, prev: T | undefined, next: T | undefined): void {
    item.list = this;
    item.prev = prev;
    item.next = next;
    if (prev === undefined) this.head = item;
    else prev.next = item;
    if (next === undefined) this.tail = item;
    else next.prev = item;
    this.size++;
  }
}
