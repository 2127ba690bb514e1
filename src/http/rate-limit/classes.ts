import type { RateClass } from "../../config/env.ts";

/** Routes whose class is not given by their method (the spec's per-operation numbers). */
const routeClasses: Record<string, RateClass> = {
  "POST /api/agents/:id/message": "message",
  // Waking an agent by hand runs an LLM turn, like a message.
  "POST /api/pulse/invoke": "message",
  "POST /api/agents/:id/memory": "read",
  "POST /api/workflows/run": "workflow_run",
  // The generic webhook called with an API key runs an agent turn (signed calls spend no budget).
  "POST /webhook/:channelId": "message",
};

/** The OpenAI-compatible gateway: not in the spec's table, so it has a class of its own (DESIGN §6). */
const isGateway = (routeTemplate: string) => routeTemplate === "/v1" || routeTemplate.startsWith("/v1/");

export function rateClassOf(method: string, routeTemplate: string | undefined): RateClass {
  if (routeTemplate && isGateway(routeTemplate)) return "gateway";
  const special = routeTemplate ? routeClasses[`${method} ${routeTemplate}`] : undefined;
  if (special) return special;
  return method === "GET" || method === "HEAD" ? "read" : "write";
}
