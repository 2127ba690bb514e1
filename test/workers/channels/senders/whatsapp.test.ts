import { afterEach, describe, expect, it, vi } from "vitest";
import { whatsapp } from "../../../../src/workers/channels/senders/whatsapp.ts";

const context = { baseUrl: "https://graph.example", token: "access-token" };

describe("the WhatsApp sender", () => {
  afterEach(() => vi.unstubAllGlobals());

  it("posts from the business number a message came to", async () => {
    const fetched = vi.fn(async (_url: string) => new Response("{}", { status: 200 }));
    vi.stubGlobal("fetch", fetched);
    await whatsapp.send(context, { phone_number_id: "106540352242922", to: "15551234567" }, "hi");
    expect(fetched.mock.calls[0]?.[0]).toBe("https://graph.example/106540352242922/messages");
  });

  it("sends the token to no other Graph path than a number's messages", async () => {
    const fetched = vi.fn(async (_url: string) => new Response("{}", { status: 200 }));
    vi.stubGlobal("fetch", fetched);
    for (const phone_number_id of ["..", "123/subscribed_apps", "me?fields=x", undefined])
      await expect(whatsapp.send(context, { phone_number_id, to: "1" }, "hi")).rejects.toThrow(
        "Not a WhatsApp phone_number_id",
      );
    expect(fetched).not.toHaveBeenCalled();
  });
});
