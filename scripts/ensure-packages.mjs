// Installs the Debian packages the service needs when they are missing (npm install runs this):
// bubblewrap, the sandbox every agent's program runs in, chromium for the browser tools, and a C
// compiler with SQLite's headers for the text index's ranking extension (scripts/build-native.mjs).
// Never fails the install: where it cannot install, it says why and what to do (the service then
// refuses what needs the missing part, with the same advice).
import { spawnSync } from "node:child_process";
import { existsSync } from "node:fs";

const browser = process.env.AGENTOS_BROWSER_PATH?.trim() || "/usr/bin/chromium";
const wanted = [
  {
    name: "bubblewrap",
    present: () => ["/usr/bin/bwrap", "/bin/bwrap"].some(existsSync),
    purpose: "the sandbox agents' programs run in",
    skip: process.env.AGENTOS_SANDBOX === "off",
  },
  {
    name: "chromium",
    present: () => existsSync(browser),
    purpose: `the browser tools (Chromium at ${browser}; AGENTOS_BROWSER_PATH names another)`,
    skip: process.env.AGENTOS_SKIP_CHROMIUM === "1",
  },
  {
    name: "gcc",
    present: () => ["/usr/bin/cc", "/usr/bin/gcc"].some(existsSync),
    purpose: "building the text index's ranking extension (native/fts5-rank.c)",
  },
  {
    name: "libsqlite3-dev",
    present: () => existsSync("/usr/include/sqlite3ext.h"),
    purpose: "building the text index's ranking extension (SQLite's extension headers)",
  },
];

const missing = wanted.filter((pkg) => !pkg.skip && !pkg.present());
if (missing.length === 0) process.exit(0);
const names = missing.map((pkg) => pkg.name).join(" ");
const warn = (why) => {
  for (const pkg of missing) console.warn(`agentos: ${pkg.name} is needed for ${pkg.purpose}; ${why}`);
  process.exit(0);
};
if (process.platform !== "linux") warn("install it with your system's package manager");
if (typeof process.getuid !== "function" || process.getuid() !== 0)
  warn(`run \`apt-get install -y ${names}\` as root`);
if (!existsSync("/usr/bin/apt-get")) warn("this system has no apt-get: install it with its package manager");
console.log(`agentos: installing Debian's ${names} (apt-get install -y ${names})`);
const env = { ...process.env, DEBIAN_FRONTEND: "noninteractive" };
const run = (args) =>
  spawnSync("apt-get", args, { stdio: ["ignore", "inherit", "inherit"], env }).status === 0;
const install = ["install", "-y", "-qq", ...missing.map((pkg) => pkg.name)];
if (!run(install) && !(run(["update", "-qq"]) && run(install)))
  warn(`apt-get install -y ${names} failed (see above)`);
const still = missing.filter((pkg) => !pkg.present());
if (still.length > 0) {
  for (const pkg of still)
    console.warn(`agentos: apt-get installed ${pkg.name}, but it is not where expected`);
}
