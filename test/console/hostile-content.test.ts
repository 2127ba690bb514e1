import { type Browser, chromium, type Page } from "playwright-core";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { serverWithFakeModel } from "../helpers/fake-openai.ts";
import { json, TEST_ADMIN_KEY } from "../helpers/server.ts";

/**
 * What the console shows may come from anyone: a model steered by a hostile page, a realm key naming
 * its agents, whatever a tool read. None of it may become markup in the console's page (which holds
 * the admin key), and the page's policy forbids markup from strings altogether (Trusted Types).
 */
const env = serverWithFakeModel({}, { shared: true });
let browser: Browser;

/** Markup that would run script if the console ever parsed it, and a link that would if it linked it. */
const HOSTILE =
  '<img src=x onerror="window.pwned=1"><svg onload="window.pwned=1"></svg>' +
  "<script>window.pwned=1</script>[see](javascript:window.pwned=1)";

beforeAll(async () => {
  browser = await chromium.launch({
    executablePath: process.env.AGENTOS_BROWSER_PATH || "/usr/bin/chromium",
    headless: true,
    args: ["--no-sandbox", "--disable-dev-shm-usage", "--disable-gpu"],
  });
}, 60_000);

afterAll(async () => {
  await browser?.close();
});

/** The console logged in, with the policy violations it meets (a blocked inline handler, a TT sink). */
async function openConsole(): Promise<{ page: Page; violations: string[] }> {
  const page = await browser.newPage();
  const violations: string[] = [];
  page.on("console", (message) => {
    if (/Content Security Policy|Trusted ?Type/i.test(message.text())) violations.push(message.text());
  });
  page.on("pageerror", (error) => violations.push(error.message));
  await page.goto(`${env.server.url}/console/`);
  await page.getByLabel("API key").fill(TEST_ADMIN_KEY);
  await page.getByRole("button", { name: "Open the console" }).click();
  await page.getByRole("link", { name: "Agents" }).waitFor();
  return { page, violations };
}

/** Nothing the data held became an element or a script in the page. */
async function expectInert(page: Page): Promise<void> {
  // Source text, run in the page (this project's types know no DOM).
  const found = await page.evaluate(`({
    pwned: window.pwned ?? null,
    elements: document.querySelectorAll(
      "#app img, #app script, #app iframe, #app object, #app [onerror], #app [onload], #app a[href^='javascript:' i]",
    ).length,
  })`);
  expect(found).toEqual({ pwned: null, elements: 0 });
}

describe("the console with hostile content", () => {
  it("serves a policy that allows only its own files and no markup built from strings", async () => {
    const response = await fetch(`${env.server.url}/console/`);
    const policy = new Map(
      (response.headers.get("content-security-policy") ?? "").split(";").map((directive) => {
        const [name = "", ...values] = directive.trim().split(/\s+/);
        return [name, values.join(" ")];
      }),
    );
    expect(policy.get("default-src")).toBe("'none'");
    expect(policy.get("script-src")).toBe("'self'");
    expect(policy.get("connect-src")).toBe("'self'");
    expect(policy.get("frame-ancestors")).toBe("'none'");
    expect(policy.get("require-trusted-types-for")).toBe("'script'");
    expect(policy.get("trusted-types")).toBe("'none'");
    expect(response.headers.get("referrer-policy")).toBe("no-referrer");
    expect(response.headers.get("cross-origin-opener-policy")).toBe("same-origin");
    expect(response.headers.get("x-content-type-options")).toBe("nosniff");
    expect(response.headers.get("x-frame-options")).toBe("DENY");
  });

  it("refuses HTML from a string in the console's page (Trusted Types are enforced)", async () => {
    const { page } = await openConsole();
    const outcome = await page.evaluate(`(() => {
      try {
        document.createElement("div").innerHTML = '<img src=x onerror="window.pwned=1">';
        return "parsed";
      } catch (error) {
        return error.name;
      }
    })()`);
    expect(outcome).toBe("TypeError");
    await page.close();
  }, 60_000);

  it("shows an agent's name, chat, tool call and memories as text", async () => {
    const agent = await json(
      await env.server.request("/api/agents", {
        method: "POST",
        json: { name: `${HOSTILE} agent`, description: HOSTILE, model: "gpt-4o", toolProfile: "code" },
      }),
    );
    expect(agent.id).toEqual(expect.any(String));
    env.fake.reply(
      { toolCalls: [{ name: "tool__file_read", arguments: { path: HOSTILE } }] },
      { content: `Here it is: ${HOSTILE}` },
    );
    const { page, violations } = await openConsole();
    await page.getByRole("link", { name: `${HOSTILE} agent` }).waitFor();
    await expectInert(page);
    await page.getByRole("link", { name: `${HOSTILE} agent` }).click();
    await page.getByRole("heading", { name: `${HOSTILE} agent` }).waitFor();
    await page.getByPlaceholder(/Message the agent/).fill(`Read ${HOSTILE}`);
    await page.getByRole("button", { name: "Send" }).click();
    await page.locator(".chat .tool", { hasText: "tool::file_read" }).waitFor();
    await page.locator(".chat .assistant", { hasText: `Here it is: ${HOSTILE}` }).waitFor();
    await page.reload();
    const memory = page.locator("section.panel", { has: page.getByRole("heading", { name: "Memory" }) });
    await memory.getByText(`Read ${HOSTILE}`).waitFor();
    await expectInert(page);
    expect(violations).toEqual([]);
    await page.close();
  }, 60_000);

  it("draws a workflow and a knowledge graph whose names are markup as text", async () => {
    const created = await env.server.request("/api/workflows", {
      method: "POST",
      json: {
        id: "hostile-flow",
        name: HOSTILE,
        description: HOSTILE,
        steps: [{ name: HOSTILE, functionId: "catalog::aliases" }],
      },
    });
    expect(created.status).toBe(201);
    const agent = await json(
      await env.server.request("/api/agents", {
        method: "POST",
        json: { name: "kg-agent", model: "gpt-4o" },
      }),
    );
    const added = await env.server.request("/api/kg/add", {
      method: "POST",
      json: {
        agentId: agent.id,
        entity: HOSTILE,
        type: HOSTILE,
        properties: { note: HOSTILE },
        relations: [{ target: `${HOSTILE}!`, type: HOSTILE }],
      },
    });
    expect(added.status).toBe(201);

    const { page, violations } = await openConsole();
    await page.goto(`${env.server.url}/console/#/workflows/hostile-flow`);
    await page.getByRole("heading", { name: HOSTILE }).waitFor();
    await page.getByRole("img", { name: "Workflow steps" }).locator(".step.sequential").waitFor();
    await expectInert(page);

    await page.getByRole("link", { name: "Graph", exact: true }).click();
    await page.getByLabel("Agent", { exact: true }).selectOption({ label: "kg-agent" });
    await page.getByLabel("Start entity").fill(HOSTILE);
    await page.getByRole("button", { name: "Show" }).click();
    const graph = page.getByRole("img", { name: "Knowledge graph" });
    await graph.getByRole("button", { name: `${HOSTILE}!` }).waitFor();
    // Its label, as long as the markup, reaches past the circle: the click is sent to the node itself.
    await graph.getByRole("button", { name: HOSTILE, exact: true }).dispatchEvent("click");
    await page.getByRole("heading", { name: HOSTILE, exact: true }).waitFor();
    await page.getByText(`v1 ${HOSTILE}`).waitFor();
    await expectInert(page);
    expect(violations).toEqual([]);
    await page.close();
  }, 60_000);

  it('opens a link to a workflow named "." without sending the admin\'s key to another route', async () => {
    // The service refuses such ids now (400), but a link is anyone's to write, and older stores may hold one.
    const realm = await json(
      await env.server.request("/api/realms", { method: "POST", json: { name: "dot-realm", owner: "ops" } }),
    );
    const { page } = await openConsole();
    const sent: string[] = [];
    page.on("request", (request) => sent.push(new URL(request.url()).pathname));
    // A link sent to the admin.
    await page.goto(`${env.server.url}/console/#/workflows/./${encodeURIComponent(realm.id)}`);
    // Resolved, /api/workflows/. is the list of workflows: the page said so instead of asking for it.
    await page.getByRole("alert").filter({ hasText: 'an id of "." or ".."' }).first().waitFor();
    expect(sent.filter((path) => path.startsWith("/api/workflows/"))).toEqual([]);
    await page.close();
  }, 60_000);
});
