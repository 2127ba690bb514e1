import { describe, expect, it } from "vitest";
import { metricTotals } from "../../../src/console/web/lib/metrics.ts";

describe("metricTotals", () => {
  it("sums each glance counter over its labels and ignores comments and other metrics", () => {
    const text = [
      "# HELP api_requests_total Requests",
      "# TYPE api_requests_total counter",
      'api_requests_total{method="GET",path="/api/agents",status="200"} 3',
      'api_requests_total{method="POST",path="/api/agents",status="201"} 2',
      'agentos_llm_cost_usd_total{model="gpt-4o"} 0.25',
      "process_cpu_seconds_total 9",
      "agentos_tool_calls_total NaN",
    ].join("\n");
    expect(metricTotals(text)).toMatchObject({
      "HTTP requests": 5,
      "Model cost (USD)": 0.25,
      "Tool calls": 0,
      "Pulse runs": 0,
    });
  });
});
