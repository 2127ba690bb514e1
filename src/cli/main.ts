import { Command } from "commander";
import { serviceVersion } from "../shared/version.ts";
import { agentsChat, agentsCreate, agentsDelete, agentsList, agentsUpdate } from "./agents.ts";
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
import {
  functionsList,
  realmsCreate,
  realmsDelete,
  realmsExport,
  realmsGet,
  realmsImport,
  realmsList,
  realmsSetStatus,
  workflowsList,
  workflowsRun,
  workflowsRuns,
} from "./daily.ts";
import { memoryBackfill } from "./memory.ts";
import { MIGRATION_FRAMEWORKS, migrateFramework, migrateReport, migrateScan } from "./migrate.ts";

const JSON_HELP = "print JSON instead of a table";

const program = new Command()
  .name("agentos")
  .description("AgentOS: host LLM-driven agents behind an HTTP API")
  .version(serviceVersion);

program
  .command("serve")
  .description(
    "Start the service (HTTP on AGENTOS_PORT, default 3111; iii workers on AGENTOS_ENGINE_PORT, default 49134)",
  )
  .action(async () => (await import("./serve.ts")).serve());

const config = program.command("config").description("Service configuration");
config
  .command("set-key <provider> [key]")
  .description(
    "Store a model provider's API key, encrypted, in the vault (key left out or -: read from standard input, so no process list shows it)",
  )
  .action(configSetKey);

config
  .command("reload")
  .description(
    "Load integrations/, agents/, hands/, config/channels/ and workflows/ again (from AGENTOS_HOME; exit 1 naming each file skipped)",
  )
  .action(configReload);
config
  .command("validate [directory]")
  .description(
    "Check a directory's integrations/, agents/, hands/, config/channels/ and workflows/ without starting anything (exit 1 on a problem)",
  )
  .action(configValidate);
config
  .command("set-secret <name> [value]")
  .description(
    "Store a secret, encrypted, in the vault (e.g. channel:slack:signing_secret; value left out or -: read from standard input)",
  )
  .action(configSetSecret);

const migrate = program
  .command("migrate")
  .description(
    "Move agents from OpenClaw, LangChain, LangGraph, CrewAI, AutoGen or OpenFang into this service",
  );
migrate
  .command("scan [directory]")
  .description("Look for the six frameworks in a directory (default: your home directory)")
  .option("--json", JSON_HELP)
  .action(migrateScan);
migrate
  .command("report")
  .description("Every migration's report added up")
  .option("--format <format>", "json or markdown", "json")
  .action(migrateReport);
for (const framework of MIGRATION_FRAMEWORKS) {
  migrate
    .command(`${framework} <path>`)
    .description(`Migrate a ${framework} project or configuration file`)
    .option("--dry-run", "list the files and vault entries it would write, write nothing")
    .action((path: string, options: { dryRun?: boolean }) => migrateFramework(framework, path, options));
}

const channels = program.command("channels").description("Chat channels bound to agents");
channels
  .command("bind <platform> <channelId> <agent>")
  .description(
    "Bind a platform channel (slack, telegram, …, or webhook for the generic route) to an agent (its id or name)",
  )
  .action(channelsBind);
channels
  .command("list")
  .description("List channel bindings")
  .option("--realm <realmId>", "only this realm's")
  .option("--platform <platform>", "only this platform's")
  .option("--json", JSON_HELP)
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
keys
  .command("list")
  .description("List API keys (ids and labels, never the keys)")
  .option("--json", JSON_HELP)
  .action(keysList);
keys.command("revoke <id>").description("Revoke an API key by id").action(keysRevoke);

const agents = program.command("agents").description("Agents of the running service");
agents
  .command("list")
  .description("List agents")
  .option("--realm <realmId>", "only this realm's")
  .option("--json", JSON_HELP)
  .action(agentsList);
agents
  .command("create <name>")
  .description("Create an agent (the best configured model unless --model)")
  .option("--model <model>", "catalog id or alias")
  .option("--prompt <text>", "system prompt")
  .option("--profile <profile>", "tool profile: chat, code, research, ops, data, full")
  .option("--tools <ids>", "comma-separated function ids or patterns")
  .option("--temperature <t>", "0 to 2")
  .option("--realm <realmId>", "the realm (default: the key's, else realm-default)")
  .option("--json", JSON_HELP)
  .action(agentsCreate);
agents
  .command("update <agent>")
  .description(
    "Change an agent's (id or name) model, prompt, temperature or tools (its sessions and memory stay)",
  )
  .option("--model <model>", "catalog id or alias")
  .option("--prompt <text>", "system prompt")
  .option("--tools <ids>", "comma-separated function ids or patterns")
  .option("--temperature <t>", "0 to 2")
  .option("--json", JSON_HELP)
  .action(agentsUpdate);
agents
  .command("delete <agent>")
  .description("Delete an agent with its sessions and memory")
  .option("--json", JSON_HELP)
  .action(agentsDelete);
agents
  .command("chat <agent>")
  .description("Talk to an agent (its id or name), replies streamed (interactive unless --message)")
  .option("--message <text>", "send one message and exit")
  .option("--session <sessionId>", "continue this session")
  .option("--json", "print each streamed event as a JSON line")
  .action(agentsChat);

const memory = program.command("memory").description("Agents' memory in the running service");
memory
  .command("backfill [agent]")
  .description(
    "Embed the memories that have no vector yet, of one agent (id or name) or of every agent with an embedding model, with a progress bar until none is pending",
  )
  .option("--json", "print the final statuses as JSON")
  .action(memoryBackfill);

const workflows = program.command("workflows").description("Workflows of the running service");
workflows.command("list").description("List workflows").option("--json", JSON_HELP).action(workflowsList);
workflows
  .command("run <workflow>")
  .description("Run a workflow (its id or name) and wait for it")
  .option("--input <input>", "the run's input (JSON, or plain text)")
  .option("--agent <agent>", "run it as this agent (id or name): its tool steps act in its workspace")
  .option("--json", JSON_HELP)
  .action(workflowsRun);
workflows
  .command("runs <workflow>")
  .description("A workflow's (id or name) runs, newest first")
  .option("--json", JSON_HELP)
  .action(workflowsRuns);

const realms = program.command("realms").description("Realms (tenants) of the running service");
realms.command("list").description("List realms").option("--json", JSON_HELP).action(realmsList);
realms
  .command("create <name>")
  .description("Create a realm")
  .option("--owner <owner>", "its owner (default: $USER)")
  .option("--description <text>", "what it is for")
  .option("--json", JSON_HELP)
  .action(realmsCreate);
realms.command("get <id>").description("Show a realm").option("--json", JSON_HELP).action(realmsGet);
realms
  .command("pause <id>")
  .description("Pause a realm (its agents stop)")
  .option("--json", JSON_HELP)
  .action(realmsSetStatus("Paused"));
realms
  .command("resume <id>")
  .description("Make a realm Active again")
  .option("--json", JSON_HELP)
  .action(realmsSetStatus("Active"));
realms
  .command("archive <id>")
  .description("Archive a realm (read-only)")
  .option("--json", JSON_HELP)
  .action(realmsSetStatus("Archived"));
realms
  .command("delete <id>")
  .description("Delete a realm and everything in it")
  .option("--json", JSON_HELP)
  .action(realmsDelete);
realms
  .command("export <id>")
  .description("Export a realm as JSON (secrets scrubbed)")
  .option("--file <path>", "write it to this file instead of printing it")
  .option("--json", JSON_HELP)
  .action(realmsExport);
realms
  .command("import <file>")
  .description("Create a realm from an export document")
  .option("--owner <owner>", "a new owner")
  .option("--json", JSON_HELP)
  .action(realmsImport);

program
  .command("functions")
  .description("List the functions the service offers")
  .option("--prefix <prefix>", "only ids starting with it")
  .option("--json", JSON_HELP)
  .action(functionsList);

program
  .command("health")
  .description("Ask a running service for its health")
  .option("--url <url>", "service address (default: AGENTOS_URL, else AGENTOS_PORT on this host, else 3111)")
  .option("--key <key>", "API key (default: AGENTOS_API_KEY, else <data dir>/admin.key)")
  .action(health);

program.parseAsync(process.argv).catch((error: Error) => {
  process.stderr.write(`agentos: ${error.message}\n`);
  process.exit(1);
});
