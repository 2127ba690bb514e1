import { readdir, stat } from "node:fs/promises";

/**
 * Bytes on `device` taken by files the processes `pids` deleted but keep open: no walk of a workspace
 * finds them, yet they fill the disk until closed. Each file counts once however many descriptors
 * hold it. One look at a time (a run may hold thousands of descriptors: the caller's measuring slows
 * down with it, the service's other file work does not wait behind it).
 */
export async function deletedOpenBytes(pids: readonly number[], device: number): Promise<number> {
  const seen = new Set<number>();
  let total = 0;
  for (const pid of pids) {
    const dir = `/proc/${pid}/fd`;
    const fds = await readdir(dir).catch(() => [] as string[]);
    for (const fd of fds) {
      const info = await stat(`${dir}/${fd}`, { bigint: false }).catch(() => null);
      if (!info?.isFile() || info.nlink !== 0 || info.dev !== device || seen.has(info.ino)) continue;
      seen.add(info.ino);
      total += info.blocks * 512;
    }
  }
  return total;
}
