import { Command } from "commander";
import { serviceVersion } from "../shared/version.ts";
import {
  channelsBind,
  channelsList,
  channelsUnbind,
  configReload,
  configSetKey,
  configSetSecret,
  configValidate,
  health,
  keysCreate,
  keysList,
  keysRevoke,
} from "./commands.ts";
import { migrateFramework, migrateReport, migrateScan } from "./migrate.ts";
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

config
  .command("reload")
  .description(
    "Load integrations/, agents/, hands/, config/channels/ and workflows/ again (from AGENTOS_HOME)",
  )
  .action(configReload);
config
  .command("validate [directory]")
  .description("Check a directory's declarative files without starting anything (exit 1 on a problem)")
  .action(configValidate);
config
  .command("set-secret <name> <value>")
  .description("Store a secret, encrypted, in the vault (e.g. channel:slack:signing_secret)")
  .action(configSetSecret);

const migrate = program
  .command("migrate")
  .description(
    "Move agents from OpenClaw, LangChain, LangGraph, CrewAI, AutoGen or OpenFang into this service",
  );
migrate
  .command("scan [directory]")
  .description("Look for the six frameworks in a directory (default: your home directory)")
  .action(migrateScan);
migrate
  .command("report")
  .description("Every migration's report added up")
  .option("--format <format>", "json or markdown", "json")
  .action(migrateReport);
for (const framework of ["openclaw", "langchain", "langgraph", "crewai", "autogen", "openfang"]) {
  migrate
    .command(`${framework} <path>`)
    .description(`Migrate a ${framework} project or configuration file`)
    .option("--dry-run", "say what would be written, write nothing")
    .action((path: string, options: { dryRun?: boolean }) => migrateFramework(framework, path, options));
}

const channels = program.command("channels").description("Chat channels bound to agents");
channels
  .command("bind <platform> <channelId> <agentId>")
  .description("Bind a platform channel (slack, telegram, …, or webhook for the generic route) to an agent")
  .action(channelsBind);
channels
  .command("list")
  .description("List channel bindings")
  .option("--realm <realmId>", "only this realm's")
  .option("--platform <platform>", "only this platform's")
  .action(channelsList);
channels
  .command("unbind <platform> <channelId>")
  .description("Remove a channel's binding")
  .action(channelsUnbind);

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
