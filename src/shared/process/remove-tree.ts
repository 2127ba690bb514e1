import { spawn } from "node:child_process";
import { lstat, rm } from "node:fs/promises";
import { AppError } from "../errors.ts";
import { findExecutable, SAFE_PATH } from "./supervise.ts";

/**
 * Removes a tree the service owns or whose programs are stopped (a workspace, a snapshot, a staging
 * directory), at any depth. A sandboxed program can nest directories by relative paths until their path
 * from the host's root passes PATH_MAX: Node's rm walks by path and fails there (ENAMETOOLONG), which
 * left a deleted agent's files behind for good. coreutils' rm walks by descriptor (openat) and removes
 * any depth; neither follows links, and --one-file-system keeps it off anything mounted inside.
 * What really cannot be removed is an error naming `what` (not the host path), never a silent success.
 */
export async function removeTree(path: string, what: string): Promise<void> {
  try {
    await rm(path, { recursive: true, force: true });
    return;
  } catch {
    // Too deep for a path walk (or something else): coreutils tries, and says why if it fails too.
  }
  const rmPath = findExecutable("rm", SAFE_PATH);
  const stderr = rmPath ? await coreutilsRm(rmPath, path) : "rm is not installed on this host";
  if (await gone(path)) return;
  // rm's first complaint, without the host's paths.
  const why = stderr.trim().split("\n")[0]?.replaceAll(path, "…").slice(0, 300);
  throw new AppError("internal", `Could not remove ${what}: ${why || "unknown error"}`);
}

function coreutilsRm(rmPath: string, path: string): Promise<string> {
  return new Promise((resolve) => {
    const child = spawn(rmPath, ["-rf", "--one-file-system", "--", path], {
      stdio: ["ignore", "ignore", "pipe"],
      env: { PATH: SAFE_PATH, LC_ALL: "C" },
    });
    let stderr = "";
    child.stderr.on("data", (chunk: Buffer) => {
      if (stderr.length < 4000) stderr += chunk.toString("utf8");
    });
    child.on("error", (error) => resolve(error.message));
    child.on("close", () => resolve(stderr));
  });
}

async function gone(path: string): Promise<boolean> {
  try {
    await lstat(path);
    return false;
  } catch (error) {
    return (error as { code?: string }).code === "ENOENT";
  }
}
