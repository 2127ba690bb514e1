import { agentTools } from "./agents/index.ts";
import { browserTools } from "./browser/index.ts";
import { codeTools } from "./code/index.ts";
import { composeTools } from "./compose.ts";
import { fileTools } from "./files/index.ts";
import { dataTools } from "./formats/index.ts";
import { gitTools } from "./git/index.ts";
import { httpTools } from "./http/index.ts";
import { knowledgeTools } from "./knowledge/index.ts";
import { mediaTools } from "./media/index.ts";
import { scheduleTools } from "./schedule/index.ts";
import { shellTools } from "./shell/index.ts";
import { systemTools } from "./system/index.ts";
import type { Tool } from "./tool.ts";

/** Every tool of the tools worker, by concern. */
export const ALL_TOOLS: Tool[] = [
  ...fileTools,
  ...shellTools,
  ...systemTools,
  ...gitTools,
  ...dataTools,
  ...codeTools,
  ...scheduleTools,
  ...knowledgeTools,
  ...agentTools,
  ...httpTools,
  ...mediaTools,
  ...composeTools,
  ...browserTools,
];
