import { readdir, readFile, stat } from "node:fs/promises";

/**
 * Bytes on `device` taken by files the processes `pids` deleted but keep open or mapped: no walk of a
 * workspace finds them, yet they fill the disk until let go. A file mapped (mmap) stays on the disk
 * after its last descriptor is closed, so mappings count as descriptors do. Each file counts once however
 * many descriptors or mappings hold it. One look at a time (a run may hold thousands of descriptors: the
 * caller's measuring slows down with it, the service's other file work does not wait behind it).
 */
export async function deletedOpenBytes(pids: readonly number[], device: number): Promise<number> {
  const seen = new Set<number>();
  let total = 0;
  const count = (info: { isFile(): boolean; nlink: number; dev: number; ino: number }, bytes: number) => {
    if (!info.isFile() || info.nlink !== 0 || info.dev !== device || seen.has(info.ino)) return;
    seen.add(info.ino);
    total += bytes;
  };
  for (const pid of pids) {
    const dir = `/proc/${pid}/fd`;
    const fds = await readdir(dir).catch(() => [] as string[]);
    for (const fd of fds) {
      const info = await stat(`${dir}/${fd}`, { bigint: false }).catch(() => null);
      if (info) count(info, info.blocks * 512);
    }
    for (const mapped of await deletedMappings(pid)) {
      // One look per file (a process may map one file thousands of times), on the workspace's disk only.
      if (mapped.dev !== device || seen.has(mapped.ino)) continue;
      // map_files names the mapped file itself (readable by a root service); otherwise what is mapped of it.
      const info = await stat(`/proc/${pid}/map_files/${mapped.range}`, { bigint: false }).catch(() => null);
      if (info) count(info, info.blocks * 512);
      else count({ isFile: () => true, nlink: 0, dev: mapped.dev, ino: mapped.ino }, mapped.length);
    }
  }
  return total;
}

interface Mapping {
  /** `start-end` as /proc/<pid>/maps and map_files name it. */
  range: string;
  length: number;
  dev: number;
  ino: number;
}

const DELETED = " (deleted)\n";

/** The process's mappings of files deleted since (`… (deleted)` in /proc/<pid>/maps). */
async function deletedMappings(pid: number): Promise<Mapping[]> {
  const maps = await readFile(`/proc/${pid}/maps`, "utf8").catch(() => "");
  const found: Mapping[] = [];
  // Only the lines of deleted files are looked at (a process may have tens of thousands of mappings).
  for (let at = maps.indexOf(DELETED); at >= 0; at = maps.indexOf(DELETED, at + DELETED.length)) {
    const line = maps.slice(maps.lastIndexOf("\n", at) + 1, at + DELETED.length - 1);
    // start-end perms offset major:minor inode path
    const fields = /^([0-9a-f]+)-([0-9a-f]+) \S+ \S+ ([0-9a-f]+):([0-9a-f]+) (\d+) /.exec(line);
    if (!fields) continue;
    const [, start = "0", end = "0", major = "0", minor = "0", ino = "0"] = fields;
    found.push({
      range: `${start}-${end}`,
      length: Number(BigInt(`0x${end}`) - BigInt(`0x${start}`)),
      dev: deviceNumber(Number.parseInt(major, 16), Number.parseInt(minor, 16)),
      ino: Number(ino),
    });
  }
  return found;
}

/** A device number as stat reports it (the kernel's new_encode_dev). */
export function deviceNumber(major: number, minor: number): number {
  return (minor & 0xff) + major * 0x100 + (minor & ~0xff) * 0x1000;
}
