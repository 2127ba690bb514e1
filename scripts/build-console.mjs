// Builds the web console (src/console/web) into dist/console: TypeScript to ES modules with the
// project's own compiler, then the page and its stylesheet beside them. npm install and npm start run it.
import { spawnSync } from "node:child_process";
import { copyFileSync, mkdirSync, readdirSync, readFileSync, statSync, writeFileSync } from "node:fs";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";

const root = join(dirname(fileURLToPath(import.meta.url)), "..");
const source = join(root, "src", "console", "web");
const out = join(root, "dist", "console");
const tsc = join(root, "node_modules", ".bin", process.platform === "win32" ? "tsc.cmd" : "tsc");
const built = spawnSync(tsc, ["-p", join(source, "tsconfig.json")], { stdio: "inherit" });
if (built.status !== 0) {
  console.error("agentos: the console did not build (see above)");
  process.exit(built.status ?? 1);
}
mkdirSync(out, { recursive: true });
for (const file of ["index.html", "styles.css"]) copyFileSync(join(source, file), join(out, file));

// Preact's own ES modules, as published, beside the console's.
const preact = join(root, "node_modules", "preact");
mkdirSync(join(out, "vendor"), { recursive: true });
copyFileSync(join(preact, "dist", "preact.mjs"), join(out, "vendor", "preact.mjs"));
copyFileSync(join(preact, "hooks", "dist", "hooks.mjs"), join(out, "vendor", "hooks.mjs"));
copyFileSync(join(preact, "jsx-runtime", "dist", "jsxRuntime.mjs"), join(out, "vendor", "jsx-runtime.mjs"));

// Browsers resolve no bare module names without an import map, which the console's CSP would have to
// allow inline: the built modules name Preact's files as the service serves them instead.
const VENDOR = { preact: "preact.mjs", "preact/hooks": "hooks.mjs", "preact/jsx-runtime": "jsx-runtime.mjs" };
const vendored = (code) =>
  code.replace(
    /(from\s*|import\s*)(["'])(preact(?:\/hooks|\/jsx-runtime)?)\2/g,
    (_all, keyword, quote, name) => `${keyword}${quote}/console/vendor/${VENDOR[name]}${quote}`,
  );
const walk = (dir) => {
  for (const entry of readdirSync(dir)) {
    const path = join(dir, entry);
    if (statSync(path).isDirectory()) walk(path);
    else if (/\.m?js$/.test(path)) writeFileSync(path, vendored(readFileSync(path, "utf8")));
  }
};
walk(out);

// The modules the first page needs (main.js and what it imports statically, not the pages it loads on
// demand) are announced in the page, so the browser fetches them at once instead of level by level.
const needed = new Set();
const follow = (url) => {
  if (needed.has(url)) return;
  needed.add(url);
  const code = readFileSync(join(out, url.slice("/console/".length)), "utf8");
  for (const [, target] of code.matchAll(/(?:^|;|\n)\s*(?:import|export)\s[^;]*?from\s*["']([^"']+)["']/g)) {
    follow(new URL(target, `http://x${url}`).pathname);
  }
};
follow("/console/main.js");
const preload = [...needed].map((href) => `    <link rel="modulepreload" href="${href}" />`).join("\n");
const page = join(out, "index.html");
writeFileSync(page, readFileSync(page, "utf8").replace("    <!-- modules -->", preload));
