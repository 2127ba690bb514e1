import { type Attributes, context, type Span, SpanStatusCode, trace } from "@opentelemetry/api";
import { AsyncLocalStorageContextManager } from "@opentelemetry/context-async-hooks";
import { OTLPTraceExporter } from "@opentelemetry/exporter-trace-otlp-http";
import { resourceFromAttributes } from "@opentelemetry/resources";
import { BatchSpanProcessor, TracerProvider } from "@opentelemetry/sdk-trace";
import { serviceVersion } from "./version.ts";

/**
 * OpenTelemetry traces of the service's work (an HTTP request → an agent turn → its model calls and tool
 * calls), exported over OTLP/HTTP when `OTEL_EXPORTER_OTLP_ENDPOINT` (or `…_TRACES_ENDPOINT`) is set,
 * with the official SDK: the exporter reads the standard OTEL_* variables (headers, timeout) itself.
 * Without an endpoint nothing is recorded and `inSpan` costs a branch.
 */
const tracer = trace.getTracer("agentos", serviceVersion);
let provider: TracerProvider | undefined;

export interface Tracing {
  /** Sends what is buffered (on close: the process's tracer stays for the other services in it). */
  flush(): Promise<void>;
}

/** Starts exporting once per process, when the environment names an endpoint; null otherwise. */
export function startTracing(env: NodeJS.ProcessEnv): Tracing | null {
  const endpoint = env.OTEL_EXPORTER_OTLP_TRACES_ENDPOINT ?? env.OTEL_EXPORTER_OTLP_ENDPOINT;
  if (!endpoint) return null;
  if (!provider) {
    const traces = env.OTEL_EXPORTER_OTLP_TRACES_ENDPOINT ?? `${endpoint.replace(/\/+$/, "")}/v1/traces`;
    provider = new TracerProvider({
      resource: resourceFromAttributes({
        "service.name": env.OTEL_SERVICE_NAME ?? "agentos",
        "service.version": serviceVersion,
      }),
      spanProcessors: [
        new BatchSpanProcessor({
          exporter: new OTLPTraceExporter({ url: traces }),
          scheduledDelayMillis: Number(env.OTEL_BSP_SCHEDULE_DELAY ?? 1000),
        }),
      ],
    });
    context.setGlobalContextManager(new AsyncLocalStorageContextManager().enable());
    trace.setGlobalTracerProvider(provider);
  }
  const exporting = provider;
  return { flush: () => exporting.forceFlush() };
}

/**
 * Runs `work` in a span that is the active one inside it (so spans started within are its children),
 * ended when the work settles and marked as an error when it fails.
 */
export function inSpan<T>(
  name: string,
  attributes: Attributes,
  work: (span?: Span) => Promise<T>,
): Promise<T> {
  if (!provider) return work();
  return tracer.startActiveSpan(name, { attributes }, async (span) => {
    try {
      return await work(span);
    } catch (error) {
      span.recordException(error as Error);
      span.setStatus({ code: SpanStatusCode.ERROR, message: (error as Error)?.message });
      throw error;
    } finally {
      span.end();
    }
  });
}

/** A span started now and ended by the caller (work that outlives a call, such as a streamed answer). */
export function startSpan(name: string, attributes: Attributes): Span | undefined {
  return provider ? tracer.startSpan(name, { attributes }) : undefined;
}

/** Ends a span from startSpan, as an error when `error` is given. */
export function endSpan(span: Span | undefined, error?: unknown): void {
  if (!span) return;
  if (error !== undefined) {
    span.recordException(error as Error);
    span.setStatus({ code: SpanStatusCode.ERROR, message: (error as Error)?.message });
  }
  span.end();
}
