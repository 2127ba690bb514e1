import autocannon from "autocannon";
import { createAgentOS } from "../src/app.ts";
import { loadConfig } from "../src/config/env.ts";
const config = { ...loadConfig({ AGENTOS_DATA_DIR: "/tmp/aprof", AGENTOS_API_KEY: "bench-admin-key-0123456789" }), port: 0, host: "127.0.0.1", rateLimits: { read: 1e9, write: 1e9, message: 1e9, workflow_run: 1e9 } };
const s = await createAgentOS(config);
const url = await s.listen();
const r = await autocannon({ url: `${url}/api/health`, connections: 16, pipelining: 10, duration: 8, workers: 1, headers: { authorization: "Bearer bench-admin-key-0123456789" } });
console.log(r.requests.average);
await s.close();
