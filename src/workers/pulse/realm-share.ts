/**
 * Cron runs of each realm going at once on this node. Runs of one agent never overlap (its lease), but a
 * tenant with many agents woken every second would otherwise start as many model calls each second as it
 * has agents, taking the provider connections and the event loop from every other realm. A tick past
 * the realm's share is skipped (`realm_busy`); the next tick tries again.
 */
export class RealmRunShare {
  private readonly running = new Map<string, number>();
  private readonly limit: number;

  constructor(limit: number) {
    this.limit = limit;
  }

  /** Takes one of the realm's places, or false when it has none left. */
  tryEnter(realmId: string): boolean {
    const held = this.running.get(realmId) ?? 0;
    if (held >= this.limit) return false;
    this.running.set(realmId, held + 1);
    return true;
  }

  leave(realmId: string): void {
    const left = (this.running.get(realmId) ?? 1) - 1;
    if (left > 0) this.running.set(realmId, left);
    else this.running.delete(realmId);
  }
}
