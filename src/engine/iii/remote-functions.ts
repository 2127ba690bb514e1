import { isPrivileged } from "../../shared/access.ts";
import { forbidden } from "../../shared/errors.ts";
import { openToRealm } from "../../shared/function-realms.ts";
import type { Engine } from "../engine.ts";
import { functionNotFound } from "../engine.ts";
import type { InvocationContext } from "../types.ts";
import type { WorkerConnection } from "./connection.ts";
import { type IiiLimits, oversized } from "./limits.ts";

export interface FunctionRegistration {
  id: string;
  description?: string;
  metadata?: Record<string, unknown>;
}

interface Owner {
  conn: WorkerConnection;
  registration: FunctionRegistration;
}

/**
 * Functions that remote workers provide. As in iii, the latest registrant of an id receives its calls;
 * unlike iii, the earlier registrants are remembered, so when the latest one disconnects the function
 * falls back to the previous one still connected instead of vanishing. Ids of in-process functions
 * (state::*, vault::*, ...) cannot be taken over by a remote worker. A registration's `metadata.realms`
 * holds as it does for an integration's functions: the worker is never told who calls, so the engine
 * refuses other realms' callers for it.
 */
export class RemoteFunctions {
  private readonly owners = new Map<string, Owner[]>();
  private readonly engine: Engine;
  private readonly limits: IiiLimits;

  constructor(engine: Engine, limits: IiiLimits) {
    this.engine = engine;
    this.limits = limits;
  }

  /** Registers the function for `conn`; returns why it was refused, or null. */
  register(conn: WorkerConnection, registration: FunctionRegistration): string | null {
    const { id } = registration;
    if (!this.held(id)) {
      return `Function ${id} is provided by the engine and cannot be registered by a worker`;
    }
    if (!conn.functions.has(id) && conn.functions.size >= this.limits.maxFunctionsPerWorker) {
      return `Worker ${conn.name} already registered ${conn.functions.size} functions (the limit)`;
    }
    const tooLarge = oversized(`The metadata of ${id}`, registration.metadata, this.limits);
    if (tooLarge) return tooLarge;
    const stack = (this.owners.get(id) ?? []).filter((owner) => owner.conn !== conn);
    stack.push({ conn, registration });
    this.owners.set(id, stack);
    conn.functions.add(id);
    try {
      this.expose({ conn, registration });
    } catch (error) {
      this.release(conn, id);
      return (error as Error).message;
    }
    return null;
  }

  /**
   * No function has the id, or a worker's has it. An in-process function registered after workers
   * took the id (an integration loading late) is the engine's from then on: the workers still
   * remembered for it must not take it back.
   */
  private held(id: string): boolean {
    const current = this.engine.functions.get(id);
    return !current || (this.owners.get(id) ?? []).some((owner) => owner.conn.id === current.worker);
  }

  /** Puts the function in the engine's registry under its current owner's connection id. */
  private expose({ conn, registration }: Owner): void {
    const { id, description, metadata } = registration;
    this.engine.registerFunction(conn.id, { id, description, metadata }, (input, ctx) =>
      this.invoke(id, input, ctx),
    );
  }

  /** Withdraws `conn`'s registration of `id` (a worker can only withdraw its own). */
  unregister(conn: WorkerConnection, id: string): void {
    if (conn.functions.has(id)) this.release(conn, id);
  }

  /** Everything `conn` provided, at once (it disconnected). */
  releaseAll(conn: WorkerConnection): void {
    for (const id of [...conn.functions]) this.release(conn, id);
  }

  private invoke(id: string, input: unknown, ctx: InvocationContext): Promise<unknown> {
    const stack = this.owners.get(id);
    const owner = stack?.[stack.length - 1];
    if (!owner) return Promise.reject(functionNotFound(id));
    const realm = ctx.auth.kind === "realm" ? ctx.auth.realmId : undefined;
    if (!isPrivileged(ctx.auth) && !openToRealm(owner.registration.metadata, realm)) {
      return Promise.reject(
        forbidden(`Function ${id} is not available to ${realm ? `realm ${realm}` : "this caller"}`),
      );
    }
    return owner.conn.call(id, input, ctx);
  }

  private release(conn: WorkerConnection, id: string): void {
    conn.functions.delete(id);
    // Only our own registration goes: an in-process function registered since then stays.
    const wasCurrent = this.engine.functions.get(id)?.worker === conn.id;
    const rest = (this.owners.get(id) ?? []).filter((owner) => owner.conn !== conn);
    if (rest.length === 0) {
      this.owners.delete(id);
      if (wasCurrent) this.engine.unregisterFunction(id);
      return;
    }
    this.owners.set(id, rest);
    // The previous registrant takes the function back, with its own description and metadata.
    const next = rest[rest.length - 1];
    if (wasCurrent && next) this.expose(next);
  }
}
