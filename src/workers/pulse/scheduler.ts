import { serialized } from "../../engine/state/cas.ts";
import type { StateClient } from "../../engine/state/client.ts";
import type { WorkerClient } from "../../engine/worker-client.ts";
import { AppError } from "../../shared/errors.ts";
import type { PulseConfig } from "./schema.ts";
import { agentKey, CONFIGS_SCOPE, configKeys, splitAgentKey } from "./store.ts";

export interface Scheduled {
  triggerId: string;
  cron: string;
  unregister(): void;
}

/**
 * This node's cron triggers, one per registered pulse: agentKey → trigger. Every node schedules every
 * pulse (the cron type lets one node run each tick), and `sync` brings this node's trigger in line
 * with the stored config after any node changed it. All changes of one agent's trigger on this node
 * are serialised, so a register and a sync of the same agent cannot interleave.
 *
 * A passive scheduler (a process that does no background work, such as a CLI command) keeps no
 * trigger at all: expressions are still checked by the cron type, but nothing is ever scheduled here.
 */
export class PulseScheduler {
  private readonly scheduled = new Map<string, Scheduled>();
  private readonly worker: WorkerClient;
  private readonly state: StateClient;
  private readonly passive: boolean;

  constructor(worker: WorkerClient, state: StateClient, options: { passive?: boolean } = {}) {
    this.worker = worker;
    this.state = state;
    this.passive = options.passive ?? false;
  }

  /** Runs `work` alone among this node's schedule changes of the agent. */
  exclusive<T>(realmId: string, agentId: string, work: () => Promise<T>): Promise<T> {
    return serialized(`pulse-schedule\u0000${agentKey(realmId, agentId)}`, work);
  }

  /**
   * A new cron trigger calling pulse::tick with the agent's ids as the tick data. Not yet installed:
   * the caller installs it once the config is stored (or unregisters it when storing fails).
   */
  create(realmId: string, agentId: string, cron: string): Scheduled {
    try {
      const trigger = this.worker.registerTrigger({
        type: "cron",
        function_id: "pulse::tick",
        config: { expression: cron, data: { agentId, realmId } },
      });
      if (this.passive) {
        // Registered only to have the expression checked: a passive process schedules nothing.
        trigger.unregister();
        return { triggerId: trigger.id, cron, unregister: () => undefined };
      }
      return { triggerId: trigger.id, cron, unregister: () => trigger.unregister() };
    } catch (error) {
      const cause = error instanceof Error ? error.message : String(error);
      throw new AppError("validation", `failed to register cron trigger: ${cause}`, { cause: error });
    }
  }

  /** Makes `entry` the agent's trigger; the one it replaces stops, so there is never more than one. */
  install(realmId: string, agentId: string, entry: Scheduled): void {
    if (this.passive) return;
    const key = agentKey(realmId, agentId);
    const previous = this.scheduled.get(key);
    this.scheduled.set(key, entry);
    if (previous && previous.triggerId !== entry.triggerId) previous.unregister();
  }

  remove(realmId: string, agentId: string): void {
    const key = agentKey(realmId, agentId);
    this.scheduled.get(key)?.unregister();
    this.scheduled.delete(key);
  }

  triggerOf(realmId: string, agentId: string): Scheduled | undefined {
    return this.scheduled.get(agentKey(realmId, agentId));
  }

  /** Agent keys of this node's triggers in a realm. */
  scheduledIn(realmId: string): Array<{ realmId: string; agentId: string }> {
    return [...this.scheduled.keys()].map(splitAgentKey).filter((target) => target.realmId === realmId);
  }

  /**
   * This node's trigger for the agent made to match the stored config: scheduled when the config is
   * new here, replaced when its cron changed, stopped when the config is gone. A disabled pulse keeps
   * its trigger: its ticks are skipped (and recorded) so status shows why the agent did not wake.
   */
  sync(realmId: string, agentId: string): Promise<void> {
    if (this.passive) return Promise.resolve();
    return this.exclusive(realmId, agentId, async () => {
      const config = await this.state.get<PulseConfig>(CONFIGS_SCOPE, agentKey(realmId, agentId));
      const current = this.triggerOf(realmId, agentId);
      if (!config) {
        this.remove(realmId, agentId);
        return;
      }
      if (current?.cron === config.cron) return;
      this.install(realmId, agentId, this.create(realmId, agentId, config.cron));
    });
  }

  /** Start-up: schedules every stored pulse. One unschedulable config does not stop the others. */
  async restoreAll(warn: (message: string) => void): Promise<number> {
    let restored = 0;
    for (const key of await configKeys(this.state)) {
      const { realmId, agentId } = splitAgentKey(key);
      try {
        await this.sync(realmId, agentId);
        restored++;
      } catch (error) {
        warn(`Pulse of agent ${agentId} in realm ${realmId} not scheduled: ${(error as Error).message}`);
      }
    }
    return restored;
  }
}
