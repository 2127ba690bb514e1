import { cpSync, mkdirSync, statSync } from "node:fs";
import { join } from "node:path";
import { type Browser, chromium, type Page } from "playwright-core";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { serverWithFakeModel } from "../helpers/fake-openai.ts";
import { json, TEST_ADMIN_KEY } from "../helpers/server.ts";

/**
 * The web console (issue #20) end to end in a real browser (Debian's chromium through playwright-core)
 * against a real service with the scripted model: every page is used as a person would, and a
 * screenshot of each lands in test-output/console/ (checked not to be blank).
 */
const env = serverWithFakeModel({}, { shared: true });
const SHOTS = join(process.cwd(), "test-output", "console");
let browser: Browser;

beforeAll(async () => {
  mkdirSync(SHOTS, { recursive: true });
  browser = await chromium.launch({
    executablePath: process.env.AGENTOS_BROWSER_PATH || "/usr/bin/chromium",
    headless: true,
    args: ["--no-sandbox", "--disable-dev-shm-usage", "--disable-gpu"],
  });
}, 60_000);

afterAll(async () => {
  await browser?.close();
});

async function openConsole(key: string, viewport = { width: 1280, height: 800 }): Promise<Page> {
  const page = await browser.newPage({ viewport });
  const problems: string[] = [];
  page.on("pageerror", (error) => problems.push(error.message));
  page.on("console", (message) => message.type() === "error" && problems.push(message.text()));
  await page.goto(`${env.server.url}/`);
  await page.getByLabel("API key").fill(key);
  await page.getByRole("button", { name: "Open the console" }).click();
  await page.getByRole("link", { name: "Agents" }).waitFor();
  expect(problems).toEqual([]);
  return page;
}

/** A screenshot that shows something: a blank page compresses to almost nothing. */
async function shoot(page: Page, name: string): Promise<void> {
  const path = join(SHOTS, `${name}.png`);
  await page.screenshot({ path, fullPage: true });
  expect(statSync(path).size, `${name}.png looks blank`).toBeGreaterThan(8_000);
}

describe("the web console", () => {
  it("is served at /console with Preact from the service itself, and / leads there", async () => {
    const root = await fetch(`${env.server.url}/`, { redirect: "manual" });
    expect(root.status).toBe(302);
    expect(root.headers.get("location")).toBe("/console/");
    const html = await fetch(`${env.server.url}/console/`);
    expect(html.headers.get("content-security-policy")).toContain("script-src 'self'");
    expect(await html.text()).toContain('src="/console/main.js"');
    const module = await fetch(`${env.server.url}/console/vendor/hooks.mjs`);
    expect(await module.text()).toContain("/console/vendor/preact.mjs");
    expect((await fetch(`${env.server.url}/console/..%2f..%2fpackage.json`)).status).toBe(404);
    expect((await fetch(`${env.server.url}/console/nothing.js`)).status).toBe(404);
  });

  it("logs in with the key, creates an agent, chats with it as the reply streams, and shows its session", async () => {
    const page = await openConsole(TEST_ADMIN_KEY);
    await expect.poll(() => page.getByText("No agents yet").count()).toBe(1);
    await shoot(page, "agents-empty");

    await page.getByRole("button", { name: "New agent" }).click();
    await page.getByLabel("Name").fill("console-agent");
    await page.getByLabel("Model").selectOption("gpt-4o");
    await page.getByLabel("Capabilities").fill("support, billing");
    await shoot(page, "agents-create");
    await page.getByRole("button", { name: "Create" }).click();
    await page.getByRole("heading", { name: "console-agent" }).waitFor();

    env.fake.reply({ content: "Hello from the console's agent, streamed word by word." });
    await page.getByPlaceholder(/Message the agent/).fill("Say hello");
    await page.getByRole("button", { name: "Send" }).click();
    await page
      .locator(".chat .assistant", { hasText: "Hello from the console's agent, streamed word by word." })
      .waitFor();
    await page.getByText(/2 messages/).waitFor();
    await shoot(page, "agent-chat");

    await page.getByText("Change", { exact: true }).click();
    await page.getByLabel("Tools (comma separated)").fill("tool::file_read, memory::*");
    await page.getByLabel("System prompt").fill("You answer in one sentence.");
    await page.getByRole("button", { name: "Save" }).click();
    await page.locator("pre.prompt", { hasText: "You answer in one sentence." }).waitFor();
    const agentId = decodeURIComponent(new URL(page.url()).hash.split("/")[2] ?? "");
    const saved = await json(await env.server.request(`/api/agents/${agentId}`));
    expect(saved).toMatchObject({
      tools: ["tool::file_read", "memory::*"],
      capabilities: ["support", "billing"],
      model: "gpt-4o",
    });

    await page.getByRole("link", { name: "Agents" }).click();
    await page.getByRole("link", { name: "console-agent" }).waitFor();
    await shoot(page, "agents");
    await page.close();
  }, 60_000);

  it("shows a risky tool call waiting in the chat until it is approved in the console", async () => {
    const created = await env.server.request("/api/agents", {
      method: "POST",
      json: {
        name: "careful-agent",
        model: "gpt-4o",
        toolProfile: "code",
        toolPolicies: { "tool::file_write": { approval: "required" } },
      },
    });
    const agent = await json(created);
    env.fake.reply(
      { toolCalls: [{ name: "tool__file_write", arguments: { path: "note.txt", content: "hello" } }] },
      { content: "I wrote the note." },
    );
    const page = await openConsole(TEST_ADMIN_KEY);
    await page.goto(`${env.server.url}/console/#/agents/${agent.id}`);
    await page.getByPlaceholder(/Message the agent/).fill("Write a note");
    await page.getByRole("button", { name: "Send" }).click();
    await page.locator(".chat .tool", { hasText: "tool::file_write" }).waitFor();
    const approvals = page.locator("section.panel", { hasText: "Approvals" });
    await approvals.getByText("tool::file_write").waitFor();
    await shoot(page, "agent-approval");
    await approvals.getByRole("button", { name: "Approve" }).click();
    await page.locator(".chat .assistant", { hasText: "I wrote the note." }).waitFor();
    await approvals.getByText("No tool call waits for approval.").waitFor();
    await page.close();
  }, 60_000);

  it("shows a workflow's steps, runs it with input, and shows the run's timeline", async () => {
    const created = await env.server.request("/api/workflows", {
      method: "POST",
      json: {
        id: "console-flow",
        name: "Console flow",
        steps: [
          { name: "aliases", functionId: "catalog::aliases" },
          { name: "a", functionId: "catalog::providers", mode: "fanout" },
          { name: "b", functionId: "catalog::aliases", mode: "fanout" },
          { name: "gather", functionId: "catalog::aliases", mode: "collect" },
        ],
      },
    });
    expect(created.status, JSON.stringify(await json(created.clone()))).toBe(201);
    const page = await openConsole(TEST_ADMIN_KEY);
    await page.getByRole("link", { name: "Workflows" }).click();
    await page.getByRole("link", { name: "Console flow" }).click();
    const drawing = page.getByRole("img", { name: "Workflow steps" });
    await drawing.locator(".step.fanout").nth(1).waitFor();
    // input → aliases → a, b (side by side) → gather (two gather edges) → output
    expect(await drawing.locator(".step").count()).toBe(6);
    expect(await drawing.locator(".edge.gather").count()).toBe(2);
    await shoot(page, "workflow");
    const definition = page.getByLabel(/^Version 1/);
    const edited = JSON.parse(await definition.inputValue());
    await definition.fill(JSON.stringify({ ...edited, name: "Console flow v2" }));
    await page.getByRole("button", { name: "Save" }).click();
    await page.getByRole("heading", { name: "Console flow v2" }).waitFor();
    await page.getByLabel(/^Version 2/).waitFor();
    await page.getByLabel("Input (JSON)").fill('{"topic": "pricing"}');
    await page.getByRole("button", { name: "Run" }).click();
    await page.getByText("completed").first().waitFor();
    await page.getByText("gather").waitFor();
    await shoot(page, "workflow-run");
    await page.goto(`${env.server.url}/console/#/workflows/console-flow`);
    page.once("dialog", (dialog) => dialog.accept());
    await page.getByRole("button", { name: "Delete" }).click();
    await page.getByRole("heading", { name: "Workflows" }).waitFor();
    await expect.poll(() => page.getByRole("link", { name: "Console flow v2" }).count()).toBe(0);
    await page.close();
  }, 60_000);

  it("verifies the audit chain and lists workers and keys on the operations page", async () => {
    const page = await openConsole(TEST_ADMIN_KEY);
    await page.getByRole("link", { name: "Operations" }).click();
    await page.getByRole("button", { name: "Verify the chain" }).click();
    await page.getByText(/The chain is intact: \d+ entries verified/).waitFor();
    await page.getByRole("cell", { name: "in process" }).first().waitFor();
    await page.getByRole("button", { name: "Reload the declarative files" }).click();
    await page.getByText(/agents created 0/).waitFor();
    const vault = page.locator("section.panel", { hasText: "Vault" });
    await vault.getByLabel("Name").fill("console:test:secret");
    await vault.getByLabel("Value").fill("s3cret-value");
    await vault.getByRole("button", { name: "Store secret" }).click();
    await vault.getByText("console:test:secret").waitFor();
    expect(await page.getByText("s3cret-value").count()).toBe(0);
    const providers = page.locator("section.panel", {
      has: page.getByRole("heading", { name: "Model providers" }),
    });
    await providers
      .getByRole("row", { name: /OpenAI/ })
      .getByRole("button", { name: "Test" })
      .click();
    await providers.getByText(/answered in \d+ ms/).waitFor();
    const bridge = page.locator("section.panel", {
      has: page.getByRole("heading", { name: "Bridge runtimes" }),
    });
    await bridge.getByLabel("Name").fill("echo-back");
    await bridge.getByLabel("Command or URL").fill("cat");
    await bridge.getByRole("button", { name: "Register" }).click();
    await bridge.getByLabel("Prompt for echo-back").fill("hello from the console");
    await bridge.getByRole("button", { name: "Invoke" }).click();
    await expect
      .poll(async () => {
        await bridge.getByRole("button", { name: "Refresh" }).click();
        return bridge.locator("li", { hasText: "hello from the console" }).getByText("completed").count();
      })
      .toBe(1);
    const channels = page.locator("section.panel", { has: page.getByRole("heading", { name: "Channels" }) });
    const agent = await json(
      await env.server.request("/api/agents", {
        method: "POST",
        json: { name: "channel-agent", model: "gpt-4o" },
      }),
    );
    await channels.getByLabel("Platform").fill("slack");
    await channels.getByLabel("Channel id").fill("C-console");
    await channels.getByLabel("Agent id").fill(agent.id);
    await channels.getByRole("button", { name: "Bind" }).click();
    const bound = channels.locator("li", { hasText: "C-console" });
    await bound.waitFor();
    await shoot(page, "operations");
    await bound.getByRole("button", { name: "Unbind" }).click();
    await expect.poll(() => bound.count()).toBe(0);
    await page.close();
  }, 60_000);

  it("shows a realm key only its realm's agents, and works at phone width", async () => {
    const realm = await json(
      await env.server.request("/api/realms", {
        method: "POST",
        json: { name: "console-realm", owner: "ops" },
      }),
    );
    const key = await json(
      await env.server.request("/api/keys", {
        method: "POST",
        json: { name: "console-realm-key", realmId: realm.id },
      }),
    );
    const own = await env.server.request("/api/agents", {
      method: "POST",
      json: { name: "realm-own-agent", model: "gpt-4o", realmId: realm.id },
    });
    expect(own.status).toBe(201);
    const page = await openConsole(key.key, { width: 390, height: 844 });
    await page.getByRole("link", { name: "realm-own-agent" }).waitFor();
    expect(await page.getByRole("link", { name: "console-agent" }).count()).toBe(0);
    await expect.poll(() => page.getByText("realm key").count()).toBe(1);
    await shoot(page, "agents-realm-key-phone");
    await page.close();
  }, 60_000);

  it("moves a mission across the board, shows a budget bar grow after a spend, and verifies the council's chain", async () => {
    const realm = await json(
      await env.server.request("/api/realms", {
        method: "POST",
        json: { name: "plane-realm", owner: "ops" },
      }),
    );
    const agent = await json(
      await env.server.request("/api/agents", {
        method: "POST",
        json: { name: "plane-agent", model: "gpt-4o", realmId: realm.id },
      }),
    );
    const page = await openConsole(TEST_ADMIN_KEY);
    await page.getByRole("link", { name: "Realms" }).click();
    await page.getByRole("link", { name: "plane-realm" }).waitFor();
    await shoot(page, "realms");
    await page.getByRole("link", { name: "plane-realm" }).click();

    await page.getByLabel("New mission title").fill("Ship the console");
    await page.getByRole("button", { name: "Add mission" }).click();
    const backlog = page.getByRole("region", { name: "backlog" });
    await backlog.getByText("Ship the console").waitFor();
    await backlog.getByRole("button", { name: "Check out" }).click();
    const active = page.getByRole("region", { name: "active" });
    await active.getByText("plane-agent").waitFor();
    await active.getByRole("button", { name: "Release" }).click();
    await active.getByText("Ship the console").waitFor({ state: "detached" });
    await page.getByRole("button", { name: "Check out" }).click();
    await active.getByText("Ship the console").waitFor();
    await active.getByLabel("Move to").selectOption("review");
    await active.getByRole("button", { name: "Move" }).click();
    const review = page.getByRole("region", { name: "review" });
    await review.getByText("Ship the console").waitFor();
    await review.getByText("0 comments").click();
    await review.getByLabel("Comment").fill("Looks good to me");
    await review.getByRole("button", { name: "Comment" }).click();
    await review.locator(".list", { hasText: "Looks good to me" }).waitFor();
    await shoot(page, "missions");

    await page.getByRole("link", { name: "Budgets" }).click();
    await page.getByLabel("For").selectOption("plane-agent");
    await page.getByLabel("Monthly limit (USD)").fill("10");
    await page.getByRole("button", { name: "Set budget" }).click();
    await page.getByText("$0.0000 of $10.00 (agent)").waitFor();
    const meter = page.getByRole("meter", { name: "plane-agent budget" });
    await expect
      .poll(() => meter.evaluate((element) => (element as unknown as { value: number }).value))
      .toBe(0);
    const spent = await env.server.request("/api/ledger/spend", {
      method: "POST",
      json: {
        realmId: realm.id,
        agentId: agent.id,
        costCents: 250,
        provider: "openai",
        model: "gpt-4o",
        inputTokens: 1000,
        outputTokens: 500,
      },
    });
    expect(spent.status).toBe(201);
    await page.getByRole("link", { name: "Missions" }).click();
    await page.getByRole("link", { name: "Budgets" }).click();
    await expect
      .poll(() => meter.evaluate((element) => (element as unknown as { value: number }).value))
      .toBe(25);
    await shoot(page, "budgets");

    await page.getByRole("link", { name: "Directives" }).click();
    await page.getByLabel("Title").fill("Grow the user base");
    await page.getByRole("button", { name: "Add directive" }).click();
    await page.getByRole("button", { name: "Grow the user base" }).click();
    await page.getByRole("heading", { name: "Ancestry" }).waitFor();
    const editor = page.locator("section.panel", { has: page.getByRole("heading", { name: "Edit" }) });
    await editor.getByLabel("Title").fill("Grow the user base tenfold");
    await editor.getByLabel("Status").selectOption("Paused");
    await editor.getByRole("button", { name: "Save" }).click();
    await page.getByRole("button", { name: "Grow the user base tenfold" }).waitFor();
    await page.locator(".tree .badge", { hasText: "Paused" }).waitFor();
    await page.getByRole("link", { name: "Org chart" }).click();
    // The directives page's forms have a Title too: fill the chart's own, once the page has changed.
    const placing = page.locator("form", { has: page.getByRole("button", { name: "Place in the chart" }) });
    await placing.getByLabel("Title").fill("Chief of staff");
    await placing.getByRole("button", { name: "Place in the chart" }).click();
    await page.locator(".org-node", { hasText: "Chief of staff" }).waitFor();
    await page
      .locator(".org-node", { hasText: "Chief of staff" })
      .getByRole("button", { name: "Remove" })
      .click();
    await page.locator(".org-node").waitFor({ state: "detached" });
    await placing.getByLabel("Title").fill("Chief of staff");
    await placing.getByRole("button", { name: "Place in the chart" }).click();
    await page.locator(".org-node", { hasText: "Chief of staff" }).waitFor();
    await page.getByRole("link", { name: "Pulses" }).click();
    await page.getByLabel("Cron (six fields, UTC)").fill("0 0 9 * * *");
    await page.getByRole("button", { name: "Schedule" }).click();
    await page.getByText("0 0 9 * * *").waitFor();
    for (const [tab, name] of [
      ["Directives", "directives"],
      ["Org chart", "hierarchy"],
      ["Pulses", "pulses"],
    ] as const) {
      await page.getByRole("link", { name: tab }).click();
      await page.locator(".empty, .tree, .org, .grid").first().waitFor();
      await shoot(page, name);
    }
    await page.getByRole("link", { name: "Council" }).click();
    await page.getByLabel("Proposal").fill("Hire a designer");
    await page.getByLabel("Requested by").fill("ops");
    await page.getByLabel("Quorum (votes)").fill("1");
    await page.getByRole("button", { name: "Submit proposal" }).click();
    const proposal = page.getByRole("row", { name: /Hire a designer/ });
    await proposal.getByText("pending").waitFor();
    await proposal.getByLabel("As").fill("ops");
    await proposal.getByRole("button", { name: "Vote" }).click();
    await proposal.getByText("approved").waitFor();
    await page.getByRole("button", { name: "Verify the activity chain" }).click();
    await page.getByText(/The activity chain is intact/).waitFor();
    await shoot(page, "council");
    await page.getByRole("link", { name: "Realms" }).click();
    page.once("dialog", (dialog) => dialog.accept());
    await page
      .getByRole("row", { name: /plane-realm/ })
      .getByRole("button", { name: "Delete" })
      .click();
    await expect.poll(() => page.getByRole("row", { name: /plane-realm/ }).count()).toBe(0);
    await page.close();
  }, 90_000);

  it("starts a swarm of a realm's agents, takes their votes, reports consensus and dissolves it", async () => {
    const realm = await json(
      await env.server.request("/api/realms", {
        method: "POST",
        json: { name: "swarm-realm", owner: "ops" },
      }),
    );
    for (const name of ["ana", "ben"]) {
      const made = await env.server.request("/api/agents", {
        method: "POST",
        json: { name, model: "gpt-4o", realmId: realm.id },
      });
      expect(made.status).toBe(201);
    }
    const page = await openConsole(TEST_ADMIN_KEY);
    await page.goto(`${env.server.url}/console/#/plane/${realm.id}/swarms`);
    await page.getByLabel("Goal").fill("Pick the launch day");
    await page.getByLabel("ana").check();
    await page.getByLabel("ben").check();
    await page.getByRole("button", { name: "Start swarm" }).click();
    await page.getByRole("cell", { name: "ana, ben" }).waitFor();
    for (const member of ["ana", "ben"]) {
      await page.getByLabel("As").selectOption(member);
      await page.getByLabel("Type").selectOption("vote");
      await page.getByLabel("Vote (for votes)").selectOption("for");
      await page.getByLabel("Message").fill("Friday");
      await page.getByRole("button", { name: "Broadcast" }).click();
      await page.locator("ol.list li", { hasText: member }).waitFor();
    }
    await page.getByLabel("Proposal", { exact: true }).fill("friday");
    await page.getByRole("button", { name: "Check consensus" }).click();
    await page
      .getByRole("status")
      .getByText(/consensus — 2 for, 0 against of 2 voters/)
      .waitFor();
    await shoot(page, "swarms");
    await page.getByRole("button", { name: "Dissolve" }).click();
    await page.getByRole("cell", { name: "dissolved" }).waitFor();
    await page.close();
  }, 60_000);

  it("lists an agent's memories and forgets one", async () => {
    const agent = await json(
      await env.server.request("/api/agents", {
        method: "POST",
        json: { name: "memory-agent", model: "gpt-4o" },
      }),
    );
    env.fake.reply({ content: "Noted: the launch is on Friday." });
    const sent = await env.server.request(`/api/agents/${agent.id}/message`, {
      method: "POST",
      json: { message: "Remember that the launch is on Friday" },
    });
    expect(sent.status).toBe(200);
    const page = await openConsole(TEST_ADMIN_KEY);
    await page.goto(`${env.server.url}/console/#/agents/${agent.id}`);
    const memory = page.locator("section.panel", { has: page.getByRole("heading", { name: "Memory" }) });
    await memory.getByText("Remember that the launch is on Friday").waitFor();
    const before = await memory.getByRole("button", { name: "Forget", exact: true }).count();
    expect(before).toBeGreaterThan(0);
    await memory.getByRole("button", { name: "Forget", exact: true }).first().click();
    await expect
      .poll(() => memory.getByRole("button", { name: "Forget", exact: true }).count())
      .toBe(before - 1);
    await shoot(page, "agent-memory");
    await page.close();
  }, 60_000);

  it("finds a framework's project, shows what a dry run would write, migrates it and lists the report", async () => {
    const source = join(env.server.dataDir, "migrate-source");
    cpSync(join(import.meta.dirname, "../fixtures/migrate/langchain"), join(source, "langchain"), {
      recursive: true,
    });
    const page = await openConsole(TEST_ADMIN_KEY);
    await page.getByRole("link", { name: "Migrate" }).click();
    await page.getByPlaceholder(/Directory to look in/).fill(source);
    await page.getByRole("button", { name: "Scan" }).click();
    const row = page.getByRole("row", { name: /langchain/ });
    await row.getByText("found").waitFor();
    await row.getByRole("button", { name: "Dry run" }).click();
    await page.getByRole("heading", { name: "langchain: dry run" }).waitFor();
    await page.getByText("No migrations yet").waitFor();
    await row.getByRole("button", { name: "Migrate" }).click();
    await page.getByRole("heading", { name: "langchain: migrated" }).waitFor();
    const reports = page.locator("section.panel", { has: page.getByRole("heading", { name: "Reports" }) });
    await reports.getByText(/^1 run: \d+ migrated/).waitFor();
    await shoot(page, "migrate");
    await page.close();
  }, 60_000);

  it("draws an agent's knowledge graph and shows an entity's timeline", async () => {
    const agent = await json(
      await env.server.request("/api/agents", {
        method: "POST",
        json: { name: "graph-agent", model: "gpt-4o" },
      }),
    );
    for (const [entity, type, relations] of [
      ["Ada", "person", [{ target: "Analytical Engine", type: "worked_on" }]],
      ["Analytical Engine", "machine", [{ target: "Babbage", type: "designed_by" }]],
    ] as const) {
      const added = await env.server.request("/api/kg/add", {
        method: "POST",
        json: { agentId: agent.id, entity, type, properties: { note: `${entity} v1` }, relations },
      });
      expect(added.status).toBe(201);
    }
    const page = await openConsole(TEST_ADMIN_KEY);
    await page.getByRole("link", { name: "Graph", exact: true }).click();
    await page.getByLabel("Agent", { exact: true }).selectOption({ label: "graph-agent" });
    await page.getByLabel("Start entity").fill("Ada");
    await page.getByRole("button", { name: "Show" }).click();
    const graph = page.getByRole("img", { name: "Knowledge graph" });
    await graph.getByRole("button", { name: "Babbage" }).waitFor();
    await graph.getByRole("button", { name: "Ada" }).click();
    await page.getByText("v1 person").waitFor();
    const add = page.locator("section.panel", {
      has: page.getByRole("heading", { name: "Add or change an entity" }),
    });
    await add.getByLabel("Agent's graph").selectOption("graph-agent");
    await add.getByLabel("Entity").fill("Ada");
    await add.getByLabel("Type").fill("person");
    await add.getByLabel("Properties (JSON)").fill('{"note": "Ada v2"}');
    await add.getByLabel("Relations").fill("worked_on: Analytical Engine; knows: Mary Somerville");
    await add.getByRole("button", { name: "Save entity" }).click();
    await graph.getByRole("button", { name: "Mary Somerville" }).waitFor();
    await shoot(page, "graph");
    await page.close();
  }, 60_000);

  it("refuses a wrong key with the API's own message", async () => {
    const page = await browser.newPage();
    await page.goto(`${env.server.url}/console/`);
    await page.getByLabel("API key").fill("not-a-key-at-all");
    await page.getByRole("button", { name: "Open the console" }).click();
    await page.getByRole("alert").waitFor();
    expect(await page.getByRole("alert").textContent()).toMatch(/key/i);
    await page.close();
  }, 60_000);
});
