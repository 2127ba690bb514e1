import { AppError } from "../../shared/errors.ts";
import type { Run } from "./schema.ts";

/** A process shutting down: its runs stop between steps, those stopped so are handed over. */
export interface Drain {
  /** Set once on shutdown: no run here starts another step, none starts or is taken over here. */
  active: boolean;
  /** Runs that stopped between two steps on shutdown (their last step checkpointed), by id. */
  parked: Map<string, Run>;
}

export function createDrain(): Drain {
  return { active: false, parked: new Map() };
}

/** What starting or retrying a run answers while this process shuts down. */
export function shuttingDown(): AppError {
  return new AppError(
    "unavailable",
    "This node is shutting down: start the run on another node, or again once the service is back",
  );
}
