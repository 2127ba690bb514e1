import { type Envelope, header, sameSecret } from "../envelope.ts";

/** Telegram sends the webhook's secret_token back in X-Telegram-Bot-Api-Secret-Token. */
export function verifyTelegram(envelope: Envelope, secretToken: string): string | null {
  const sent = header(envelope, "x-telegram-bot-api-secret-token");
  if (!sent) return "Missing X-Telegram-Bot-Api-Secret-Token";
  return sameSecret(sent, secretToken) ? null : "Invalid Telegram secret token";
}
