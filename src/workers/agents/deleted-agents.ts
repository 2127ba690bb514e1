/** How long a deleted agent is remembered: longer than any turn is let run (the engine's call timeout). */
const REMEMBER_MS = 30 * 60_000;

/**
 * The agents this process deleted, or is deleting (agent::delete, a realm purge), remembered for a while:
 * a turn ending here asks this instead of reading the agent again (embedded mode, where this process is
 * the only one that deletes agents). Oldest first, so forgetting stops at the first one still recent.
 */
export class DeletedAgents {
  private readonly at = new Map<string, number>();

  add(agentId: string): void {
    this.at.delete(agentId);
    this.at.set(agentId, Date.now());
    const cutoff = Date.now() - REMEMBER_MS;
    for (const [id, when] of this.at) {
      if (when >= cutoff) break;
      this.at.delete(id);
    }
  }

  has(agentId: string): boolean {
    return this.at.has(agentId);
  }
}
