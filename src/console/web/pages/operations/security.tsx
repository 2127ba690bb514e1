import { useState } from "preact/hooks";
import { api } from "../../api.ts";
import { preview, when } from "../../lib/format.ts";
import { Table } from "../../table.tsx";
import type { Answer } from "../../types.ts";
import { Action, ApiForm, Panel, Problem, Show, useLoad } from "../../ui.tsx";
import { VerifyChain } from "../verify-chain.tsx";

export function Audit() {
  const log = useLoad(() => api<Answer<"security::audit_query">>("/api/audit?limit=20"), []);
  return (
    <Panel title="Audit log" wide>
      <VerifyChain chain="chain" path="/api/audit/verify" />
      <Show loaded={log}>
        {(value) => (
          <Table
            rows={value.entries}
            rowKey={(entry) => entry.seq}
            columns={[
              { head: "#", cell: (entry) => entry.seq },
              { head: "Type", cell: (entry) => entry.type },
              { head: "Agent", cell: (entry) => entry.agentId ?? "—" },
              { head: "When", cell: (entry) => when(entry.timestamp) },
              { head: "Detail", cell: (entry) => <code>{preview(entry.detail ?? "", 120)}</code> },
            ]}
          />
        )}
      </Show>
    </Panel>
  );
}

export function Keys() {
  const keys = useLoad(() => api<Answer<"auth::keys::list">>("/api/keys?limit=200"), []);
  const [made, setMade] = useState<string>();
  const [error, setError] = useState<string>();
  const create = async (event: Event) => {
    event.preventDefault();
    const form = new FormData(event.currentTarget as HTMLFormElement);
    const realmId = String(form.get("realmId") ?? "").trim();
    setError(undefined);
    try {
      const key = await api<Answer<"auth::keys::create">>("/api/keys", {
        body: { name: String(form.get("name") ?? "").trim(), ...(realmId ? { realmId } : {}) },
      });
      setMade(key.key);
      keys.reload();
    } catch (caught) {
      setError((caught as Error).message);
    }
  };
  return (
    <Panel title="API keys" wide>
      <form class="inline" onSubmit={create}>
        <input name="name" required placeholder="Key name" />
        <input name="realmId" placeholder="Realm (empty: admin key)" />
        <button type="submit">Create key</button>
      </form>
      <Problem error={error} />
      {made ? (
        <p class="ok">
          New key, shown this once: <code>{made}</code>
        </p>
      ) : null}
      <Show loaded={keys}>
        {(value) => (
          <Table
            rows={value.keys}
            rowKey={(key) => key.id}
            columns={[
              { head: "Name", cell: (key) => key.name },
              { head: "Role", cell: (key) => key.role },
              { head: "Realm", cell: (key) => key.realmId ?? "—" },
              { head: "Starts with", cell: (key) => <code>{key.hint}</code> },
              { head: "Created", cell: (key) => when(key.createdAt) },
              {
                head: "",
                cell: (key) => (
                  <Action
                    label="Revoke"
                    kind="danger"
                    run={() =>
                      api(`/api/keys/${encodeURIComponent(key.id)}`, { method: "DELETE" }).then(keys.reload)
                    }
                  />
                ),
              },
            ]}
          />
        )}
      </Show>
    </Panel>
  );
}

/** Secret names and times (never their values), and a way to store one. */
export function Vault() {
  const secrets = useLoad(() => api<Answer<"vault::list">>("/api/vault"), []);
  return (
    <Panel title="Vault">
      <ApiForm
        submit="Store secret"
        fields={[
          { name: "key", label: "Name", required: true, placeholder: "channel:slack:signing_secret" },
          { name: "value", label: "Value", required: true },
        ]}
        run={(values) => api("/api/vault", { body: values })}
        onDone={secrets.reload}
      />
      <Show
        loaded={secrets}
        empty={(value) => value.keys.length === 0}
        whenEmpty="No secrets stored: provider keys and channel secrets go here."
      >
        {(value) => (
          <ul class="list">
            {value.keys.map((secret) => (
              <li key={secret.key}>
                <span>
                  <code>{secret.key}</code>
                </span>
                <small>updated {when(secret.updatedAt)}</small>
                <Action
                  label="Delete"
                  kind="danger"
                  run={() =>
                    api(`/api/vault/${encodeURIComponent(secret.key)}`, { method: "DELETE" }).then(
                      secrets.reload,
                    )
                  }
                />
              </li>
            ))}
          </ul>
        )}
      </Show>
    </Panel>
  );
}
