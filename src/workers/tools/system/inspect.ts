import { readdir, readFile, readlink } from "node:fs/promises";
import { sep } from "node:path";
import { listContained } from "../../../shared/fs/contained-dir.ts";
import { workspaceOwner } from "../../../shared/process/sandbox/owner.ts";

/**
 * Linux /proc: the processes of the workspace `root`: those of its own uid when the sandbox gives it
 * one (a sandboxed program's working directory is /workspace, not the host's path), else those whose
 * working directory is `root` or below it.
 */
export async function processesUnder(root: string) {
  const owner = workspaceOwner(root);
  let pids: string[];
  try {
    pids = (await readdir("/proc")).filter((name) => /^\d+$/.test(name));
  } catch {
    return [];
  }
  const found = [];
  for (const pid of pids) {
    try {
      const status = await readFile(`/proc/${pid}/status`, "utf8");
      if (owner) {
        if (Number(/Uid:\s+(\d+)/.exec(status)?.[1]) !== owner.uid) continue;
      } else {
        const cwd = await readlink(`/proc/${pid}/cwd`);
        if (cwd !== root && !cwd.startsWith(root + sep)) continue;
      }
      const argv = (await readFile(`/proc/${pid}/cmdline`, "utf8")).split("\0").filter(Boolean);
      const rss = /VmRSS:\s+(\d+) kB/.exec(status)?.[1];
      found.push({
        pid: Number(pid),
        command: argv[0] ?? "",
        args: argv.slice(1),
        rssBytes: rss ? Number(rss) * 1024 : 0,
        state: /State:\s+(\S+)/.exec(status)?.[1] ?? "?",
      });
    } catch {
      // Gone meanwhile, or not ours to read.
    }
  }
  return found;
}

/** Bytes and files under `dir`, links not followed; stops counting at 100 000 entries. */
export async function directorySize(
  dir: string,
): Promise<{ bytes: number; files: number; complete: boolean }> {
  let bytes = 0;
  let files = 0;
  const queue = [dir];
  while (queue.length > 0) {
    const current = queue.pop() as string;
    // Listed only while still inside `dir` (a program may swap a queued directory for a link).
    for (const entry of (await listContained(dir, current)) ?? []) {
      if (files >= 100_000) return { bytes, files, complete: false };
      if (entry.isDirectory) queue.push(entry.path);
      else {
        files++;
        bytes += entry.size;
      }
    }
  }
  return { bytes, files, complete: true };
}
