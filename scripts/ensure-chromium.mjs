// Installs Debian's chromium for the browser tools when it is missing (npm install runs this).
// Never fails the install: where it cannot install, it says why and what to do.
import { spawnSync } from "node:child_process";
import { existsSync } from "node:fs";

const path = process.env.AGENTOS_BROWSER_PATH?.trim() || "/usr/bin/chromium";
if (existsSync(path)) process.exit(0);
const skip = (why) => {
  console.warn(`agentos: the browser tools need Chromium at ${path}; ${why}`);
  process.exit(0);
};
if (process.env.AGENTOS_SKIP_CHROMIUM === "1") skip("skipped (AGENTOS_SKIP_CHROMIUM=1)");
if (process.platform !== "linux") skip("install Chromium and set AGENTOS_BROWSER_PATH");
if (typeof process.getuid !== "function" || process.getuid() !== 0)
  skip("run `apt-get install -y chromium` as root, or set AGENTOS_BROWSER_PATH");
if (!existsSync("/usr/bin/apt-get"))
  skip("this system has no apt-get: install Chromium and set AGENTOS_BROWSER_PATH");
console.log("agentos: installing Debian's chromium for the browser tools (apt-get install -y chromium)");
const env = { ...process.env, DEBIAN_FRONTEND: "noninteractive" };
const run = (args) =>
  spawnSync("apt-get", args, { stdio: ["ignore", "inherit", "inherit"], env }).status === 0;
if (
  !run(["install", "-y", "-qq", "chromium"]) &&
  !(run(["update", "-qq"]) && run(["install", "-y", "-qq", "chromium"]))
) {
  skip("apt-get install -y chromium failed (see above)");
}
if (!existsSync(path)) skip(`apt-get installed chromium, but not at ${path}: set AGENTOS_BROWSER_PATH`);
