/** The counters worth a glance, by the Prometheus metric they are summed from. */
const GLANCE: Record<string, string> = {
  "HTTP requests": "api_requests_total",
  "Model calls (tokens)": "agentos_llm_tokens_total",
  "Model cost (USD)": "agentos_llm_cost_usd_total",
  "Tool calls": "agentos_tool_calls_total",
  "Pulse runs": "agentos_pulse_runs_total",
  "Workflow runs": "agentos_workflow_runs_total",
};

/**
 * Prometheus text exposition → the glance counters, each summed over its labels. Lines of other metrics,
 * comments and samples that are not numbers are ignored.
 */
export function metricTotals(text: string): Record<string, number> {
  const sums = new Map<string, number>();
  for (const line of text.split("\n")) {
    if (line.startsWith("#") || line.trim() === "") continue;
    const match = /^([a-zA-Z_:][a-zA-Z0-9_:]*)(\{.*\})?\s+(\S+)/.exec(line);
    if (!match) continue;
    const value = Number(match[3]);
    if (Number.isFinite(value)) sums.set(match[1] as string, (sums.get(match[1] as string) ?? 0) + value);
  }
  return Object.fromEntries(Object.entries(GLANCE).map(([label, metric]) => [label, sums.get(metric) ?? 0]));
}
