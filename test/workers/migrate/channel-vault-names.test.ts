import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { CHANNEL_VAULT_NAMES } from "../../../src/channels/platforms.ts";
import { call } from "../../helpers/control-plane.ts";
import { startTestServer, type TestServer } from "../../helpers/server.ts";

let base: string;
let server: TestServer;

/** Every vault name some channel adapter reads. */
const READ = new Set([...CHANNEL_VAULT_NAMES.values()].flatMap((names) => Object.values(names)));

beforeAll(async () => {
  base = mkdtempSync(join(tmpdir(), "agentos-migrate-vault-"));
  // Each framework's channel secrets, those our adapters read and those of connection modes we lack.
  mkdirSync(join(base, "openclaw/.openclaw"), { recursive: true });
  writeFileSync(
    join(base, "openclaw/.openclaw/openclaw.json"),
    JSON.stringify({
      channels: {
        slack: { botToken: "xoxb-1", signingSecret: "sign-1", appToken: "xapp-1" },
        discord: { token: "discord-bot-1", publicKey: "ab12" },
        msteams: { appPassword: "teams-pass-1" },
        whatsapp: { accessToken: "wa-1", appSecret: "wa-secret-1", verifyToken: "wa-verify-1" },
        telegram: { botToken: "123:tg", webhookSecret: "tg-secret" },
        line: { channelAccessToken: "line-1", channelSecret: "line-secret-1" },
      },
    }),
  );
  mkdirSync(join(base, "openfang"), { recursive: true });
  writeFileSync(
    join(base, "openfang/config.toml"),
    [
      "[channels.slack]",
      'bot_token_env = "SLACK_BOT_TOKEN"',
      'app_token_env = "SLACK_APP_TOKEN"',
      "[channels.discord]",
      'bot_token_env = "DISCORD_BOT_TOKEN"',
      "[channels.telegram]",
      'bot_token_env = "TELEGRAM_BOT_TOKEN"',
      "",
    ].join("\n"),
  );
  writeFileSync(
    join(base, "openfang/.env"),
    "SLACK_BOT_TOKEN=xoxb-2\nSLACK_APP_TOKEN=xapp-2\nDISCORD_BOT_TOKEN=discord-bot-2\nTELEGRAM_BOT_TOKEN=456:tg\n",
  );
  server = await startTestServer({ env: { ...process.env, AGENTOS_MIGRATE_ROOTS: base } });
});

afterAll(async () => {
  await server?.close();
  rmSync(base, { recursive: true, force: true });
});

describe("channel secrets a migration writes", () => {
  it("are only vault names some channel adapter reads; the others are reported as skipped", async () => {
    const written: Record<string, string[]> = {};
    for (const [framework, configPath] of [
      ["openclaw", join(base, "openclaw/.openclaw/openclaw.json")],
      ["openfang", join(base, "openfang")],
    ] as const) {
      const { status, body } = await call(server, "POST", `/api/migrate/${framework}`, {
        dryRun: true,
        configPath,
      });
      expect(status, JSON.stringify(body)).toBe(200);
      written[framework] = body.secrets
        .map((secret: { vaultName: string }) => secret.vaultName)
        .filter((name: string) => name.startsWith("channel:"))
        .sort();
      expect(
        written[framework]?.filter((name) => !READ.has(name)),
        `${framework} writes vault names no adapter reads`,
      ).toEqual([]);
      expect(JSON.stringify(body.skipped)).toMatch(/does not read it/);
    }
    expect(written.openclaw).toEqual([
      "channel:discord:public_key",
      "channel:line:channel_secret",
      "channel:line:channel_token",
      "channel:slack:bot_token",
      "channel:slack:signing_secret",
      "channel:telegram:bot_token",
      "channel:telegram:secret_token",
      "channel:whatsapp:access_token",
      "channel:whatsapp:app_secret",
      "channel:whatsapp:verify_token",
    ]);
    expect(written.openfang).toEqual(["channel:slack:bot_token", "channel:telegram:bot_token"]);
  });
});
