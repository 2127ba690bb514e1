import { realpathSync } from "node:fs";
import { AppError } from "../../errors.ts";
import type { Supervised } from "../supervise.ts";

/**
 * The programs this service runs in each workspace, and the workspaces being changed as a whole (a
 * snapshot restore, a delete). While the service moves or removes a workspace's files, no program of
 * it may run: one could swap a directory for a link under the service's walk and have it act outside
 * the workspace. So the change first stops every program it knows of (and refuses new ones) until done.
 */
export class WorkspacePrograms {
  private readonly live = new Map<string, Set<Supervised>>();
  private readonly closed = new Map<string, number>();

  /** Refused (409) while the workspace is being changed as a whole. */
  assertOpen(workspace: string): void {
    if (this.closed.has(key(workspace))) {
      throw new AppError(
        "conflict",
        "Your workspace is being restored or removed as a whole: no program can start in it now",
      );
    }
  }

  /** Remembers a started program until it ends. */
  track<S extends Supervised>(workspace: string, started: S): S {
    const at = key(workspace);
    const programs = this.live.get(at) ?? new Set<Supervised>();
    this.live.set(at, programs);
    programs.add(started);
    void started.done.finally(() => {
      programs.delete(started);
      if (programs.size === 0 && this.live.get(at) === programs) this.live.delete(at);
    });
    return started;
  }

  /** Ends every program of the workspace this service started, and waits until each is gone. */
  async stop(workspace: string): Promise<void> {
    const programs = [...(this.live.get(key(workspace)) ?? [])];
    for (const program of programs) program.cancel();
    await Promise.all(programs.map((program) => program.done.catch(() => undefined)));
  }

  /** Runs `work` with the workspace closed to new programs, after `stop` ended those running. */
  async without<T>(workspace: string, stop: () => Promise<void>, work: () => Promise<T>): Promise<T> {
    const at = key(workspace);
    this.closed.set(at, (this.closed.get(at) ?? 0) + 1);
    try {
      await stop();
      return await work();
    } finally {
      const left = (this.closed.get(at) ?? 1) - 1;
      if (left > 0) this.closed.set(at, left);
      else this.closed.delete(at);
    }
  }
}

/** Workspaces by real path (the tools hand over real paths; a delete may name the plain one). */
function key(workspace: string): string {
  try {
    return realpathSync(workspace);
  } catch {
    return workspace;
  }
}
