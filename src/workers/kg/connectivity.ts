/**
 * Connected components of an undirected multigraph under insertions and deletions, counted exactly.
 *
 * A union-find cannot delete, so the graph keeps a spanning forest instead: each node carries its
 * component's label, and an edge joining two labels becomes a forest edge (the smaller component takes
 * the larger's label: a node is relabelled O(log n) times over all merges). Deleting an edge that is
 * not in the forest changes nothing. Deleting a forest edge cuts its tree in two: both halves are walked
 * along forest edges in step, so the walk stops after twice the smaller half's adjacency entries; an edge from that half to
 * the rest replaces the cut one, and without one the half is a component of its own.
 */
export class Connectivity {
  /** node → neighbour → (number of edges between them × 2) + 1 if the pair is a forest edge. */
  private readonly adjacency = new Map<string, Map<string, number>>();
  private readonly labels = new Map<string, number>();
  private readonly sizes = new Map<number, number>();
  private nextLabel = 0;
  components = 0;

  get nodes(): number {
    return this.adjacency.size;
  }

  has(node: string): boolean {
    return this.adjacency.has(node);
  }

  addNode(node: string): void {
    if (this.adjacency.has(node)) return;
    this.adjacency.set(node, new Map());
    this.labels.set(node, this.nextLabel);
    this.sizes.set(this.nextLabel++, 1);
    this.components++;
  }

  /** One more edge between a and b (a self-loop joins nothing). */
  addEdge(a: string, b: string): void {
    this.addNode(a);
    this.addNode(b);
    if (a === b) return;
    const fromA = this.adjacency.get(a) as Map<string, number>;
    const fromB = this.adjacency.get(b) as Map<string, number>;
    const code = fromA.get(b) ?? 0;
    if (code >= 2) {
      fromA.set(b, code + 2);
      fromB.set(a, code + 2);
      return;
    }
    const labelA = this.labels.get(a) as number;
    const labelB = this.labels.get(b) as number;
    if (labelA === labelB) {
      fromA.set(b, 2);
      fromB.set(a, 2);
      return;
    }
    const [small, large] =
      (this.sizes.get(labelA) as number) <= (this.sizes.get(labelB) as number) ? [a, labelB] : [b, labelA];
    const members = this.tree(small);
    this.sizes.delete(this.labels.get(small) as number);
    for (const member of members) this.labels.set(member, large);
    this.sizes.set(large, (this.sizes.get(large) as number) + members.size);
    fromA.set(b, 3);
    fromB.set(a, 3);
    this.components--;
  }

  /** One edge fewer between a and b (none there: nothing happens). */
  removeEdge(a: string, b: string): void {
    if (a === b) return;
    const fromA = this.adjacency.get(a);
    const fromB = this.adjacency.get(b);
    const code = fromA?.get(b);
    if (!fromA || !fromB || code === undefined) return;
    if (code >= 4) {
      fromA.set(b, code - 2);
      fromB.set(a, code - 2);
      return;
    }
    fromA.delete(b);
    fromB.delete(a);
    if ((code & 1) === 0) return;
    const half = this.smallerHalf(a, b);
    for (const node of half) {
      for (const [other, otherCode] of this.adjacency.get(node) as Map<string, number>) {
        if (half.has(other)) continue;
        (this.adjacency.get(node) as Map<string, number>).set(other, otherCode | 1);
        (this.adjacency.get(other) as Map<string, number>).set(node, otherCode | 1);
        return;
      }
    }
    const old = this.labels.get(a) as number;
    const fresh = this.nextLabel++;
    for (const node of half) this.labels.set(node, fresh);
    this.sizes.set(fresh, half.size);
    this.sizes.set(old, (this.sizes.get(old) as number) - half.size);
    this.components++;
  }

  /** The nodes of `start`'s forest tree. */
  private tree(start: string): Set<string> {
    const seen = new Set([start]);
    const queue = [start];
    for (let i = 0; i < queue.length; i++) {
      for (const [other, code] of this.adjacency.get(queue[i] as string) as Map<string, number>) {
        if ((code & 1) === 1 && !seen.has(other)) {
          seen.add(other);
          queue.push(other);
        }
      }
    }
    return seen;
  }

  /**
   * The smaller of the two forest trees holding a and b (just cut apart), walking both in step one
   * adjacency entry at a time, so a node with many neighbours on the larger side costs no more than the
   * smaller side's own entries.
   */
  private smallerHalf(a: string, b: string): Set<string> {
    const walks = [a, b].map((start) => ({
      seen: new Set([start]),
      queue: [start],
      next: 0,
      entries: null as Iterator<[string, number]> | null,
    }));
    for (;;) {
      for (const walk of walks) {
        if (!walk.entries) {
          if (walk.next === walk.queue.length) return walk.seen;
          const node = walk.queue[walk.next++] as string;
          walk.entries = (this.adjacency.get(node) as Map<string, number>).entries();
        }
        const entry = walk.entries.next();
        if (entry.done) {
          walk.entries = null;
          continue;
        }
        const [other, code] = entry.value;
        if ((code & 1) === 1 && !walk.seen.has(other)) {
          walk.seen.add(other);
          walk.queue.push(other);
        }
      }
    }
  }
}
