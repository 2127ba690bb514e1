import { benchAgents } from "./agents.bench.ts";
import { benchConsole } from "./console.bench.ts";
import { benchControl } from "./control.bench.ts";
import { benchEngine } from "./engine.bench.ts";
import { benchGateway } from "./gateway.bench.ts";
import { benchHttp } from "./http.bench.ts";
import { benchIii } from "./iii.bench.ts";
import { benchKg } from "./kg.bench.ts";
import { benchLedger } from "./ledger.bench.ts";
import { benchMemory } from "./memory.bench.ts";
import { benchState } from "./state.bench.ts";
import { benchTools } from "./tools.bench.ts";
import { benchWorkflow } from "./workflow.bench.ts";

const suites: Record<string, () => Promise<void>> = {
  engine: benchEngine,
  state: benchState,
  http: benchHttp,
  agents: benchAgents,
  iii: benchIii,
  workflow: benchWorkflow,
  memory: benchMemory,
  ledger: benchLedger,
  gateway: benchGateway,
  control: benchControl,
  kg: benchKg,
  tools: benchTools,
  console: benchConsole,
  vector: async () => (await import("./vector.bench.ts")).benchVector(),
  retrieval: async () => (await import("./retrieval.bench.ts")).benchRetrieval(),
};
const selected = process.argv.slice(2);

console.log(`AgentOS benchmarks on Node ${process.version} (ratios are measured within this run)`);
for (const [name, run] of Object.entries(suites)) {
  if (selected.length === 0 || selected.includes(name)) await run();
}
