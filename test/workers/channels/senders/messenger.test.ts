import { afterEach, describe, expect, it, vi } from "vitest";
import { messenger } from "../../../../src/workers/channels/senders/messenger.ts";

const context = { baseUrl: "https://graph.example", token: "page-token" };

describe("the Messenger sender", () => {
  afterEach(() => vi.unstubAllGlobals());

  it("posts from the Page a message came to", async () => {
    const fetched = vi.fn(async (_url: string) => new Response("{}", { status: 200 }));
    vi.stubGlobal("fetch", fetched);
    await messenger.send(context, { page: "1234567890", recipient: "PSID" }, "hi");
    expect(fetched.mock.calls[0]?.[0]).toBe("https://graph.example/1234567890/messages");
  });

  it("sends the token to no other Graph path than a Page's messages", async () => {
    const fetched = vi.fn(async (_url: string) => new Response("{}", { status: 200 }));
    vi.stubGlobal("fetch", fetched);
    for (const page of ["..", "123/subscribed_apps", "me?fields=x"])
      await expect(messenger.send(context, { page, recipient: "PSID" }, "hi")).rejects.toThrow(
        "Not a Page ID",
      );
    expect(fetched).not.toHaveBeenCalled();
  });
});
