import { createAgentOS } from "../app.ts";
import { type Config, loadConfig } from "../config/env.ts";
import { assertSafeEngineBinding } from "../engine/iii/server.ts";
import { createLogger } from "../shared/logger.ts";

/** `agentos serve`: start, print a generated admin key once, and shut down cleanly on SIGTERM/SIGINT. */
export async function serve(): Promise<void> {
  const config = loadConfig();
  // Refused before anything is opened or created, like any other bad setting.
  assertSafeEngineBinding(config.engineHost, config.engineToken);
  const logger = createLogger(config.logLevel);
  const service = await createAgentOS(config, { logger });
  let address: string;
  try {
    address = await service.listen();
  } catch (error) {
    await service.close().catch(() => undefined);
    const saved = service.generatedAdminKey
      ? ` (the admin key generated for this data dir is in ${service.generatedAdminKey.file})`
      : "";
    throw new Error(`${listenFailure(error, config)}${saved}`);
  }
  // Shown only once the service is up: a start that fails prints no key it then does not use.
  if (service.generatedAdminKey) {
    process.stdout.write(
      `\nGenerated an admin API key (shown once; also saved to ${service.generatedAdminKey.file}):\n\n  ${service.generatedAdminKey.key}\n\n`,
    );
  }
  logger.info({ address, workers: service.engineUrl, storage: service.store.kind }, "agentos is serving");

  let stopping = false;
  const stop = (signal: string) => {
    if (stopping) return;
    stopping = true;
    logger.info({ signal }, "shutting down: finishing in-flight work (up to 10 s)");
    service.close().then(
      () => process.exit(0),
      (error) => {
        logger.error({ err: error }, "shutdown failed");
        process.exit(1);
      },
    );
  };
  process.on("SIGTERM", () => stop("SIGTERM"));
  process.on("SIGINT", () => stop("SIGINT"));
}

/** Failures of a listen address: a name that does not resolve, an address this machine does not have. */
const HOST_FAILURES = new Set(["ENOTFOUND", "EAI_AGAIN", "EADDRNOTAVAIL"]);

/** A port in use or a host that is not this machine's, named with the variable that sets it. */
function listenFailure(error: unknown, config: Config): string {
  const { code, port, address, hostname } = error as {
    code?: string;
    port?: number;
    address?: string;
    hostname?: string;
  };
  if (code && HOST_FAILURES.has(code)) {
    const host = hostname ?? address;
    const variables = [
      ...(host === config.host ? ["AGENTOS_HOST"] : []),
      ...(host === config.engineHost ? ["AGENTOS_ENGINE_HOST"] : []),
    ];
    return `Cannot listen on ${host} (${code}): it is no address of this machine; set ${variables.join(" and ") || "AGENTOS_HOST"} to one (e.g. 127.0.0.1, or 0.0.0.0 for every interface)`;
  }
  if (code !== "EADDRINUSE") return (error as Error).message;
  const variable =
    port === config.enginePort ? "AGENTOS_ENGINE_PORT (the iii worker port)" : "AGENTOS_PORT (the HTTP port)";
  return `Port ${port} on ${address} is already in use (EADDRINUSE): stop what holds it, or set ${variable} to another port`;
}
