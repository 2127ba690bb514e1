import { createAgentOS } from "../app.ts";
import { loadConfig } from "../config/env.ts";
import { assertSafeEngineBinding } from "../engine/iii/server.ts";
import { createLogger } from "../shared/logger.ts";

/** `agentos serve`: start, print a generated admin key once, and shut down cleanly on SIGTERM/SIGINT. */
export async function serve(): Promise<void> {
  const config = loadConfig();
  // Refused before anything is opened or created, like any other bad setting.
  assertSafeEngineBinding(config.engineHost, config.engineToken);
  const logger = createLogger(config.logLevel);
  const service = await createAgentOS(config, { logger });
  if (service.generatedAdminKey) {
    process.stdout.write(
      `\nGenerated an admin API key (shown once; also saved to ${service.generatedAdminKey.file}):\n\n  ${service.generatedAdminKey.key}\n\n`,
    );
  }
  const address = await service.listen();
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
