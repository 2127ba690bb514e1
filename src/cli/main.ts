import { Command } from "commander";
import { serviceVersion } from "../shared/version.ts";
import { configSetKey, health, keysCreate, keysList, keysRevoke } from "./commands.ts";
import { serve } from "./serve.ts";

const program = new Command()
  .name("agentos")
  .description("AgentOS: host LLM-driven agents behind an HTTP API")
  .version(serviceVersion);

program
  .command("serve")
  .description(
    "Start the service (HTTP on AGENTOS_PORT, default 3111; iii workers on AGENTOS_ENGINE_PORT, default 49134)",
  )
  .action(serve);

const config = program.command("config").description("Service configuration");
config
  .command("set-key <provider> <key>")
  .description("Store a model provider's API key, encrypted, in the vault")
  .action(configSetKey);

const keys = program.command("keys").description("API keys for the HTTP API");
keys
  .command("create")
  .description("Create an API key (admin, or bound to one realm with --realm)")
  .option("--realm <realmId>", "bind the key to this realm")
  .option("--name <name>", "a label to tell keys apart")
  .action(keysCreate);
keys.command("list").description("List API keys (ids and labels, never the keys)").action(keysList);
keys.command("revoke <id>").description("Revoke an API key by id").action(keysRevoke);

program
  .command("health")
  .description("Ask a running service for its health")
  .option("--url <url>", "service address", `http://127.0.0.1:${process.env.AGENTOS_PORT ?? 3111}`)
  .option("--key <key>", "API key (default: AGENTOS_API_KEY, else <data dir>/admin.key)")
  .action(health);

program.parseAsync(process.argv).catch((error: Error) => {
  process.stderr.write(`agentos: ${error.message}\n`);
  process.exit(1);
});
