import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { fromErrorBody, toErrorBody } from "../../../src/engine/iii/errors.ts";
import { FrameError, parseFrame } from "../../../src/engine/iii/protocol.ts";
import { AppError, badRequest } from "../../../src/shared/errors.ts";

describe("parseFrame", () => {
  it("reads the SDK's registertrigger frame, ignoring the leaked message_type", () => {
    const frame = parseFrame(
      '{"type":"registertrigger","function_id":"demo::echo","config":{"api_path":"/echo/:id","http_method":"POST"},"metadata":{"route":"echo"},"id":"c404","message_type":"registertrigger","trigger_type":"http"}',
    );
    expect(frame).toEqual({
      type: "registertrigger",
      id: "c404",
      trigger_type: "http",
      function_id: "demo::echo",
      config: { api_path: "/echo/:id", http_method: "POST" },
      metadata: { route: "echo" },
    });
  });

  it("ignores unknown frame types and blank text", () => {
    expect(parseFrame('{"type":"fromthefuture"}')).toBeNull();
    expect(parseFrame("  \n")).toBeNull();
  });

  it("names the invocation of a bad invokefunction so its caller can be answered", () => {
    const error = (() => {
      try {
        parseFrame(
          '{"type":"invokefunction","invocation_id":"i-1","function_id":"a::b","action":{"type":"teleport"}}',
        );
      } catch (caught) {
        return caught as FrameError;
      }
    })();
    expect(error).toBeInstanceOf(FrameError);
    expect(error?.invocationId).toBe("i-1");
    expect(error?.functionId).toBe("a::b");
  });

  it("never fails with anything but a FrameError, whatever the input", () => {
    const frames = fc.oneof(
      fc.string(),
      fc.json(),
      fc
        .record({
          type: fc.constantFrom(
            "invokefunction",
            "invocationresult",
            "registerfunction",
            "registertrigger",
            "reattach",
            "triggerregistrationresult",
            "unregistertrigger",
          ),
          id: fc.anything(),
          function_id: fc.anything(),
          invocation_id: fc.anything(),
          trigger_type: fc.anything(),
          metadata: fc.anything(),
          action: fc.anything(),
        })
        .map((record) => JSON.stringify(record) ?? ""),
    );
    fc.assert(
      fc.property(frames, (text) => {
        try {
          parseFrame(text);
        } catch (error) {
          expect(error).toBeInstanceOf(FrameError);
        }
      }),
    );
  });
});

describe("iii error bodies", () => {
  it("carries our reason when there is one, else our code, and never a stack", () => {
    expect(
      toErrorBody(new AppError("not_found", "Function x not found", { reason: "function_not_found" })),
    ).toEqual({
      code: "function_not_found",
      message: "Function x not found",
    });
    expect(toErrorBody(badRequest("name: required"))).toEqual({
      code: "validation",
      message: "name: required",
    });
    expect(toErrorBody(new Error("oops"))).toEqual({ code: "invocation_error", message: "oops" });
  });

  it("maps a worker's error to a fitting status and passes it on unchanged to other workers", () => {
    const body = { code: "invocation_failed", message: "boom", stacktrace: "Error: boom\n at x" };
    const error = fromErrorBody(body, "a::b");
    expect(error.status).toBe(500);
    expect(error.message).toBe("boom");
    expect(toErrorBody(error)).toEqual(body);
    expect(fromErrorBody({ code: "not_found", message: "no such item" }, "a::b").status).toBe(404);
    expect(fromErrorBody({ code: "invocation_stopped", message: "gone" }, "a::b").status).toBe(503);
    expect(fromErrorBody("just text", "a::b")).toMatchObject({ status: 500, message: "just text" });
  });
});
