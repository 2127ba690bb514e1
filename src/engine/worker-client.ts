import type { z } from "zod";
import type {
  FunctionDefinition,
  FunctionHandler,
  FunctionHost,
  TriggerRegistration,
  TriggerRequest,
  TriggerTypeProvider,
} from "./types.ts";

/**
 * What a worker module sees. The names mirror iii-sdk's client (registerFunction, registerTrigger,
 * trigger), so the same module reads alike whether it runs in this process or connects remotely.
 */
export class WorkerClient {
  private readonly engine: FunctionHost;
  readonly name: string;

  constructor(engine: FunctionHost, name: string) {
    this.engine = engine;
    this.name = name;
  }

  /**
   * A function that documents its `output` must answer what that schema describes: the handler's result
   * is checked against it by the compiler, so the OpenAPI document cannot drift from the code. (An
   * envelope function, which documents its request `body`, answers a whole reply whose body `output` is.)
   */
  registerFunction<
    Schema extends z.ZodType,
    Output extends z.ZodType = z.ZodType,
    Body extends z.ZodType | undefined = undefined,
  >(
    definition: FunctionDefinition<Schema> & { output?: Output; body?: Body },
    handler: FunctionHandler<z.output<Schema>, undefined extends Body ? z.input<Output> : unknown>,
  ): { id: string } {
    this.engine.registerFunction(this.name, definition, handler);
    return { id: definition.id };
  }

  registerTrigger(registration: TriggerRegistration): { id: string; unregister(): void } {
    return this.engine.registerTrigger(this.name, registration);
  }

  /** An http trigger: `function_id` answers `http_method api_path` (status 201 for creates). */
  registerRoute(
    function_id: string,
    http_method: string,
    api_path: string,
    /**
     * `array_list`: the answer's list field, sent as a bare array with a `Link` to the next page;
     * `accepted_field`: 202 when the payload's field is true; `envelope`: the raw request and reply;
     * `progress_stream`: server-sent events of the function's progress when the request asks to stream.
     */
    options: {
      status?: 200 | 201 | 202;
      array_list?: string;
      accepted_field?: string;
      envelope?: boolean;
      api_key?: "optional";
      progress_stream?: boolean;
      answers?: "text/event-stream";
    } = {},
  ): { id: string; unregister(): void } {
    return this.registerTrigger({ type: "http", function_id, config: { api_path, http_method, ...options } });
  }

  registerTriggerType(provider: TriggerTypeProvider): void {
    this.engine.registerTriggerType(provider);
  }

  trigger<T = unknown>(request: TriggerRequest): Promise<T> {
    return this.engine.trigger(request) as Promise<T>;
  }
}
