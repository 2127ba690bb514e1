import { describe, expect, it } from "vitest";
import { cgroupLayout } from "../../../../src/shared/process/sandbox/cgroup-layout.ts";

const mount = (id: number, root: string, point: string, fstype: string, options: string) =>
  `${id} 31 0:${id} ${root} ${point} rw,relatime - ${fstype} ${fstype} ${options}`;

const HYBRID_MOUNTS = [
  mount(31, "/", "/sys/fs/cgroup", "tmpfs", "rw,mode=755"),
  mount(35, "/", "/sys/fs/cgroup/memory", "cgroup", "rw,memory"),
  mount(39, "/", "/sys/fs/cgroup/pids", "cgroup", "rw,pids"),
  mount(40, "/", "/sys/fs/cgroup/cpu,cpuacct", "cgroup", "rw,cpu,cpuacct"),
  mount(41, "/", "/sys/fs/cgroup/unified", "cgroup2", "rw"),
].join("\n");
const HYBRID_GROUPS = "9:name=systemd:/\n8:pids:/\n4:memory:/process_api/abc\n2:cpu,cpuacct:/agentos\n0::/\n";
const V2_MOUNTS = mount(30, "/", "/sys/fs/cgroup", "cgroup2", "rw,nsdelegate,memory_recursiveprot");
const V2_GROUPS = "0::/system.slice/agentos.service\n";

describe("where a process may make control groups", () => {
  it("uses the v1 memory, pids and cpu hierarchies on a hybrid machine, at the process's own groups", () => {
    expect(cgroupLayout(HYBRID_GROUPS, HYBRID_MOUNTS, () => "hugetlb")).toEqual({
      version: 1,
      memory: "/sys/fs/cgroup/memory/process_api/abc",
      pids: "/sys/fs/cgroup/pids",
      cpu: "/sys/fs/cgroup/cpu,cpuacct/agentos",
    });
  });

  it("uses the unified hierarchy where it offers the memory controller", () => {
    const seen: string[] = [];
    const layout = cgroupLayout(V2_GROUPS, V2_MOUNTS, (dir) => {
      seen.push(dir);
      return "cpu io memory pids";
    });
    expect(layout).toEqual({ version: 2, dir: "/sys/fs/cgroup/system.slice/agentos.service" });
    expect(seen).toEqual(["/sys/fs/cgroup/system.slice/agentos.service"]);
  });

  it("says why when the unified hierarchy does not give this process the memory controller", () => {
    const layout = cgroupLayout(V2_GROUPS, V2_MOUNTS, () => "cpu pids");
    expect(layout).toMatchObject({
      version: null,
      reason: expect.stringContaining("memory controller is not available"),
    });
  });

  it("maps a group through a mount that shows only part of the hierarchy (a container's view)", () => {
    const mounts = mount(30, "/docker/abc", "/sys/fs/cgroup/memory", "cgroup", "rw,memory");
    expect(cgroupLayout("4:memory:/docker/abc/inner\n", mounts, () => null)).toEqual({
      version: 1,
      memory: "/sys/fs/cgroup/memory/inner",
      pids: null,
      cpu: null,
    });
    expect(cgroupLayout("4:memory:/elsewhere\n", mounts, () => null)).toMatchObject({ version: null });
  });

  it("says why when no cgroup file system is mounted", () => {
    expect(cgroupLayout("0::/\n", mount(1, "/", "/", "ext4", "rw"), () => null)).toMatchObject({
      version: null,
      reason: expect.stringContaining("no cgroup file system"),
    });
  });

  it("reads mount points with escaped spaces", () => {
    const mounts = mount(35, "/", "/sys/fs/cgroup/mem\\040ory", "cgroup", "rw,memory");
    expect(cgroupLayout("4:memory:/a\n", mounts, () => null)).toMatchObject({
      memory: "/sys/fs/cgroup/mem ory/a",
    });
  });
});
