// A remote AgentOS worker written only with the public iii SDK: it connects to the engine's worker
// port, registers functions and an HTTP route, and uses the engine's state. Plain JavaScript, so any
// Node.js 20+ runs it: `node worker.mjs`.
import { registerWorker } from "iii-sdk";

const url = process.env.AGENTOS_ENGINE_URL ?? "ws://127.0.0.1:49134";
const token = process.env.AGENTOS_ENGINE_TOKEN;

const iii = registerWorker(url, {
  workerName: "greeter",
  workerDescription: "Greets people and counts the greetings",
  otel: { enabled: false },
  // The engine asks for its token only when AGENTOS_ENGINE_TOKEN is set on the server.
  headers: token ? { authorization: `Bearer ${token}` } : undefined,
});

// An HTTP handler gets iii's request object ({body, headers, query_params, path_params, method, path})
// and answers {status_code, headers?, body}.
iii.registerFunction(
  "greet::hello",
  async (req) => {
    const name = req.query_params?.name ?? req.body?.name ?? "world";
    const counted = await iii.trigger({
      function_id: "state::update",
      payload: { scope: "greetings", key: "count", ops: [{ type: "increment", path: "n", by: 1 }] },
    });
    return { status_code: 200, body: { message: `Hello, ${name}!`, greeted: counted.new_value.n } };
  },
  { description: "Greets {name} and says how many greetings so far" },
);

iii.registerTrigger({
  type: "http",
  function_id: "greet::hello",
  config: { api_path: "/api/greet", http_method: "GET" },
});

// A plain function: callable from other workers, workflows, agents' tools or engine.trigger.
iii.registerFunction("greet::shout", async ({ text }) => ({ text: String(text).toUpperCase() }), {
  description: "Upper-cases {text}",
});

console.log(`greeter worker connecting to ${url}`);
const stop = async () => {
  await iii.shutdown();
  process.exit(0);
};
process.on("SIGINT", stop);
process.on("SIGTERM", stop);
