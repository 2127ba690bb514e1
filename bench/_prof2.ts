import autocannon from "autocannon";
import { createAgentOS } from "../src/app.ts";
import { loadConfig } from "../src/config/env.ts";

const config = {
  ...loadConfig({ AGENTOS_DATA_DIR: "/tmp/aprof", AGENTOS_API_KEY: "bench-admin-key-0123456789" }),
  port: 0,
  host: "127.0.0.1",
  rateLimits: false as const,
};
const s = await createAgentOS(config);
s.engine.worker("x").registerFunction({ id: "x::noop" }, () => ({ ok: 1 }));
s.engine
  .worker("x")
  .registerTrigger({ type: "http", function_id: "x::noop", config: { api_path: process.env.P as string } });
const url = await s.listen();
const r = await autocannon({
  url: `${url}${process.env.P}`,
  connections: 32,
  duration: 6,
  workers: 1,
  headers: { authorization: "Bearer bench-admin-key-0123456789" },
});
console.log(process.env.P, r.requests.average);
await s.close();
