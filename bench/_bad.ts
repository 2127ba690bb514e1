import { createAgentOS } from "../src/app.ts";
import { loadConfig } from "../src/config/env.ts";
import { request } from "node:http";
const config = { ...loadConfig({ AGENTOS_DATA_DIR: "/tmp/aprof", AGENTOS_API_KEY: "bench-admin-key-0123456789" }), port: 0, host: "127.0.0.1", rateLimits: false as const };
const s = await createAgentOS(config);
const url = new URL(await s.listen());
for (const path of ["/%zz", "/api/%zz", "/api/keys/%E0%A4%A", "//api//health", "/api/health?x=%zz"]) {
  await new Promise<void>((resolve) => {
    const req = request({ host: url.hostname, port: url.port, path, headers: { authorization: "Bearer bench-admin-key-0123456789" } }, (res) => {
      console.log(path, res.statusCode, res.headers["x-frame-options"], res.headers["strict-transport-security"]);
      res.resume(); res.on("end", resolve);
    });
    req.end();
  });
}
await s.close();
