import type { TriggerFn } from "../../engine/types.ts";

/** What the OpenAI-compatible routes need of the service. */
export interface CompletionDeps {
  trigger: TriggerFn;
  env: NodeJS.ProcessEnv;
}
