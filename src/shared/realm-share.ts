/**
 * Work of each realm going at once in this process, up to a share: background work no HTTP request holds
 * (pulse cron runs, asynchronous workflow runs), which one tenant would otherwise start without bound,
 * taking the provider connections and the event loop from every other realm.
 */
export class RealmRunShare {
  private readonly running = new Map<string, number>();
  readonly limit: number;

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
