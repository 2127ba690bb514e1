import { useState } from "preact/hooks";
import { api } from "../api.ts";
import { when } from "../lib/format.ts";
import { href, navigate } from "../router.ts";
import { Table } from "../table.tsx";
import type { Answer } from "../types.ts";
import { Badge, Field, Page, Panel, Problem, Show, useLoad } from "../ui.tsx";

const PROFILES = ["chat", "code", "research", "ops", "data", "full"];

export function AgentsPage() {
  const agents = useLoad(() => api<Answer<"agent::list">>("/api/agents?limit=200"), []);
  const [creating, setCreating] = useState(false);
  return (
    <Page
      title="Agents"
      actions={
        <button type="button" class="primary" onClick={() => setCreating(!creating)}>
          {creating ? "Close" : "New agent"}
        </button>
      }
    >
      {creating ? <CreateAgent onCreated={(id) => navigate("agents", id)} /> : null}
      <Show
        loaded={agents}
        empty={(value) => value.agents.length === 0}
        whenEmpty="No agents yet. Create one with New agent, then chat with it."
      >
        {({ agents: list }) => (
          <Table
            rows={list}
            rowKey={(agent) => agent.id}
            columns={[
              { head: "Name", cell: (agent) => <a href={href("agents", agent.id)}>{agent.name}</a> },
              { head: "Model", cell: (agent) => agent.model },
              { head: "Realm", cell: (agent) => agent.realmId },
              { head: "Status", cell: (agent) => <Badge value={agent.status} /> },
              { head: "Created", cell: (agent) => when(agent.createdAt) },
            ]}
          />
        )}
      </Show>
    </Page>
  );
}

function CreateAgent(props: { onCreated: (id: string) => void }) {
  const models = useLoad(() => api<Answer<"catalog::models">>("/api/models?limit=500"), []);
  const realms = useLoad(() => api<Answer<"realm::list">>("/api/realms?limit=200"), []);
  const [error, setError] = useState<string>();
  const submit = async (event: Event) => {
    event.preventDefault();
    const form = new FormData(event.currentTarget as HTMLFormElement);
    const text = (name: string) => String(form.get(name) ?? "").trim();
    const capabilities = text("capabilities")
      .split(",")
      .map((entry) => entry.trim())
      .filter(Boolean);
    try {
      const created = await api<Answer<"agent::create">>("/api/agents", {
        body: {
          name: text("name"),
          ...(text("realmId") ? { realmId: text("realmId") } : {}),
          ...(text("model") ? { model: text("model") } : {}),
          toolProfile: text("toolProfile"),
          ...(text("systemPrompt") ? { systemPrompt: text("systemPrompt") } : {}),
          ...(capabilities.length ? { capabilities } : {}),
        },
      });
      props.onCreated(created.id);
    } catch (caught) {
      setError((caught as Error).message);
    }
  };
  return (
    <Panel title="New agent" wide>
      <form class="form" onSubmit={submit}>
        <Field label="Name">
          <input name="name" required maxLength={128} placeholder="support-bot" />
        </Field>
        <Field label="Model" hint="Empty: the best model whose provider is configured">
          <select name="model">
            <option value="">Default</option>
            {(models.value ?? []).map((model) => (
              <option key={model.id} value={model.id}>
                {model.id} — {model.provider}, {model.tier}
              </option>
            ))}
          </select>
        </Field>
        {(realms.value?.length ?? 0) > 1 ? (
          <Field label="Realm">
            <select name="realmId">
              {(realms.value ?? []).map((realm) => (
                <option key={realm.id} value={realm.id}>
                  {realm.name}
                </option>
              ))}
            </select>
          </Field>
        ) : null}
        <Field label="Tool profile">
          <select name="toolProfile">
            {PROFILES.map((profile) => (
              <option key={profile}>{profile}</option>
            ))}
          </select>
        </Field>
        <Field label="Capabilities" hint="Comma separated">
          <input name="capabilities" placeholder="support, billing" />
        </Field>
        <Field label="System prompt">
          <textarea name="systemPrompt" rows={3} />
        </Field>
        <button type="submit" class="primary">
          Create
        </button>
        <Problem error={error ?? models.error} />
      </form>
    </Panel>
  );
}
