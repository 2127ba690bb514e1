import { Counter, Gauge, Histogram, Registry } from "prom-client";
import type { TelemetryEvent } from "../engine/telemetry.ts";

/** Prometheus metrics of one server instance (its own registry, so test servers never collide). */
export class HttpMetrics {
  readonly registry = new Registry();
  private readonly duration = new Histogram({
    name: "api_request_duration_ms",
    help: "HTTP request duration in milliseconds, by route template",
    labelNames: ["method", "route", "status"],
    buckets: [1, 2, 5, 10, 25, 50, 100, 250, 500, 1000, 2500, 5000, 10000, 30000],
    registers: [this.registry],
  });
  private readonly requests = new Counter({
    name: "api_requests_total",
    help: "HTTP requests by method, route template and status",
    labelNames: ["method", "path", "status"],
    registers: [this.registry],
  });
  private readonly functionErrors = new Counter({
    name: "function_error_total",
    help: "Failed function invocations by function id and error code",
    labelNames: ["function", "code"],
    registers: [this.registry],
  });

  private readonly tokens = new Counter({
    name: "agentos_llm_tokens_total",
    help: "Model tokens by provider, model, realm and direction (input or output)",
    labelNames: ["provider", "model", "realm", "direction"],
    registers: [this.registry],
  });
  private readonly cost = new Counter({
    name: "agentos_llm_cost_usd_total",
    help: "Model cost in US dollars by provider, model and realm",
    labelNames: ["provider", "model", "realm"],
    registers: [this.registry],
  });
  private readonly modelCalls = new Histogram({
    name: "agentos_llm_call_duration_seconds",
    help: "Model call duration (a stream: until its last part) by provider, model and outcome",
    labelNames: ["provider", "model", "outcome"],
    buckets: [0.05, 0.1, 0.25, 0.5, 1, 2, 5, 10, 20, 30, 60, 120],
    registers: [this.registry],
  });
  private readonly toolCalls = new Counter({
    name: "agentos_tool_calls_total",
    help: "Agents' tool calls by tool and outcome (ok, error, denied)",
    labelNames: ["tool", "outcome"],
    registers: [this.registry],
  });
  private readonly pulseRuns = new Counter({
    name: "agentos_pulse_runs_total",
    help: "Pulse runs by outcome (completed, failed, skipped)",
    labelNames: ["outcome"],
    registers: [this.registry],
  });
  private readonly channelDeliveryFailures = new Counter({
    name: "agentos_channel_delivery_failures_total",
    help: "Failed attempts at delivering an agent's reply to a chat platform, by platform",
    labelNames: ["platform"],
    registers: [this.registry],
  });
  private readonly channelTurnFailures = new Counter({
    name: "agentos_channel_turn_failures_total",
    help: "Failed agent turns of chat platform messages (each attempt), by platform",
    labelNames: ["platform"],
    registers: [this.registry],
  });
  private readonly channelDropped = new Counter({
    name: "agentos_channel_messages_dropped_total",
    help: "Chat platform messages dropped by a turn limit (no agent turn), by platform and whose count they ran past (channel, sender)",
    labelNames: ["platform", "over"],
    registers: [this.registry],
  });
  private readonly workflowRuns = new Counter({
    name: "agentos_workflow_runs_total",
    help: "Workflow run lifecycle events by event (started, completed, failed, cancelled)",
    labelNames: ["event"],
    registers: [this.registry],
  });
  private readonly workflowSteps = new Counter({
    name: "agentos_workflow_steps_total",
    help: "Workflow steps by status (completed, failed, skipped)",
    labelNames: ["status"],
    registers: [this.registry],
  });
  private readonly memoryEmbedded = new Counter({
    name: "agentos_memory_embeddings_total",
    help: "Memory entries embedded (vectors stored) by this process's embedding queue",
    registers: [this.registry],
  });
  private readonly memoryEmbeddingFailures = new Counter({
    name: "agentos_memory_embedding_failures_total",
    help: "Failed memory embedding batches by reason (error: retried with backoff; refused: budget or realm); rejected: entries the provider refused on their own (never retried)",
    labelNames: ["reason"],
    registers: [this.registry],
  });
  private readonly memoryEmbeddingPending = new Gauge({
    name: "agentos_memory_embeddings_pending",
    help: "Memory entries this process's embedding queue knows are waiting for a vector",
    registers: [this.registry],
  });

  /** The service's work as counters and histograms (see engine/telemetry.ts). */
  observe(event: TelemetryEvent): void {
    switch (event.type) {
      case "model_usage":
        this.tokens.labels(event.provider, event.model, event.realmId, "input").inc(event.inputTokens);
        this.tokens.labels(event.provider, event.model, event.realmId, "output").inc(event.outputTokens);
        this.cost.labels(event.provider, event.model, event.realmId).inc(event.costUsd);
        break;
      case "model_call":
        this.modelCalls.labels(event.provider, event.model, event.outcome).observe(event.durationMs / 1000);
        break;
      case "tool_call":
        this.toolCalls.labels(event.tool, event.outcome).inc();
        break;
      case "pulse_run":
        this.pulseRuns.labels(event.outcome).inc();
        break;
      case "channel_delivery":
        this.channelDeliveryFailures.labels(event.platform).inc();
        break;
      case "channel_turn":
        this.channelTurnFailures.labels(event.platform).inc();
        break;
      case "channel_dropped":
        this.channelDropped.labels(event.platform, event.over).inc();
        break;
      case "memory_embedding":
        if (event.embedded > 0) this.memoryEmbedded.inc(event.embedded);
        if (event.failed > 0) this.memoryEmbeddingFailures.labels("error").inc(event.failed);
        if (event.refused > 0) this.memoryEmbeddingFailures.labels("refused").inc(event.refused);
        if (event.rejected > 0) this.memoryEmbeddingFailures.labels("rejected").inc(event.rejected);
        this.memoryEmbeddingPending.set(event.pending);
        break;
      case "workflow":
        if (event.step) this.workflowSteps.labels(event.step.status).inc();
        else this.workflowRuns.labels(event.event).inc();
        break;
    }
  }

  /** Label children by method, route template and status: label lookups are the costly part per request. */
  private readonly children = new Map<
    string,
    { duration: Histogram.Internal<string>; count: Counter.Internal }
  >();

  observeRequest(method: string, route: string, status: number, durationMs: number): void {
    const id = `${method} ${status} ${route}`;
    let child = this.children.get(id);
    if (!child) {
      const code = String(status);
      child = {
        duration: this.duration.labels(method, route, code),
        count: this.requests.labels(method, route, code),
      };
      this.children.set(id, child);
    }
    child.duration.observe(durationMs);
    child.count.inc();
  }

  observeFunctionError(functionId: string, code: string): void {
    this.functionErrors.labels(functionId, code).inc();
  }

  text(): Promise<string> {
    return this.registry.metrics();
  }

  get contentType(): string {
    return this.registry.contentType;
  }
}
