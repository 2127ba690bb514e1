import { Counter, Histogram, Registry } from "prom-client";

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
