import { matchesPattern as matches } from "../../shared/function-pattern.ts";

/** The most specific pattern of the agent's tool policies that names the tool decides its approval. */
export function matchesPolicy(
  policies: Record<string, { approval?: string }> | undefined,
  functionId: string,
  approval: string,
): boolean {
  const hits = Object.entries(policies ?? {}).filter(([pattern]) => matches(pattern, functionId));
  if (hits.length === 0) return false;
  hits.sort(([a], [b]) => b.replace(/\*/g, "").length - a.replace(/\*/g, "").length);
  return hits[0]?.[1].approval === approval;
}
