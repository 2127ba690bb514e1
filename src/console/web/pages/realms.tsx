import { useState } from "preact/hooks";
import { api } from "../api.ts";
import { parseJson, when } from "../lib/format.ts";
import { href } from "../router.ts";
import { Table } from "../table.tsx";
import type { Answer, Item } from "../types.ts";
import { Action, ApiForm, Badge, DeleteAction, Page, Panel, Problem, Show, useLoad } from "../ui.tsx";

export type Realm = Item<Answer<"realm::list">>;

/** Realms with their status, export as a download and import from a file (admin). */
export function RealmsPage(props: { admin: boolean }) {
  const realms = useLoad(() => api<Answer<"realm::list">>("/api/realms?limit=200"), []);
  const setStatus = (realm: Realm, status: Realm["status"]) =>
    api(`/api/realms/${encodeURIComponent(realm.id)}`, { method: "PATCH", body: { status } }).then(
      realms.reload,
    );
  return (
    <Page title="Realms">
      <Show loaded={realms} empty={(list) => list.length === 0} whenEmpty="No realms: an admin creates them.">
        {(list) => (
          <Table
            rows={list}
            rowKey={(realm) => realm.id}
            columns={[
              { head: "Name", cell: (realm) => <a href={href("plane", realm.id)}>{realm.name}</a> },
              { head: "Id", cell: (realm) => realm.id },
              { head: "Owner", cell: (realm) => realm.owner },
              { head: "Status", cell: (realm) => <Badge value={realm.status} /> },
              { head: "Created", cell: (realm) => when(realm.createdAt) },
              {
                head: "",
                class: "row-actions",
                cell: (realm) => (
                  <>
                    {props.admin && realm.status === "Active" ? (
                      <Action label="Pause" run={() => setStatus(realm, "Paused")} />
                    ) : null}
                    {props.admin && realm.status === "Paused" ? (
                      <Action label="Resume" run={() => setStatus(realm, "Active")} />
                    ) : null}
                    <Action label="Export" run={() => download(realm)} />
                    {props.admin ? (
                      <DeleteAction
                        question={`Delete the realm ${realm.name} with its agents, workflows and records?`}
                        path={`/api/realms/${encodeURIComponent(realm.id)}`}
                        onDone={realms.reload}
                      />
                    ) : null}
                  </>
                ),
              },
            ]}
          />
        )}
      </Show>
      {props.admin ? (
        <Panel title="New realm" wide>
          <ApiForm
            submit="Create realm"
            fields={[
              { name: "name", label: "Name", required: true },
              { name: "owner", label: "Owner", required: true, placeholder: "ops@example.com" },
            ]}
            run={(values) => api("/api/realms", { body: values })}
            onDone={realms.reload}
          />
        </Panel>
      ) : null}
      {props.admin ? <Import onDone={realms.reload} /> : null}
    </Page>
  );
}

async function download(realm: Realm): Promise<void> {
  const document = await api<unknown>(`/api/realms/${encodeURIComponent(realm.id)}/export`, { body: {} });
  const link = Object.assign(window.document.createElement("a"), {
    href: URL.createObjectURL(new Blob([JSON.stringify(document, null, 2)], { type: "application/json" })),
    download: `${realm.name}.realm.json`,
  });
  link.click();
  URL.revokeObjectURL(link.href);
}

function Import(props: { onDone: () => void }) {
  const [error, setError] = useState<string>();
  const [done, setDone] = useState<string>();
  const submit = async (event: Event) => {
    event.preventDefault();
    const form = new FormData(event.currentTarget as HTMLFormElement);
    const file = form.get("file");
    const owner = String(form.get("owner") ?? "").trim();
    setError(undefined);
    try {
      if (!(file instanceof File) || file.size === 0) throw new Error("Choose an exported realm file first");
      const document = parseJson(await file.text(), "The file");
      const query = owner ? `?newOwner=${encodeURIComponent(owner)}` : "";
      const imported = await api<Answer<"realm::import">>(`/api/realms/import${query}`, { body: document });
      setDone(imported.realmId);
      props.onDone();
    } catch (caught) {
      setError((caught as Error).message);
    }
  };
  return (
    <Panel title="Import a realm" wide>
      <form class="inline" onSubmit={submit}>
        <input name="file" type="file" accept="application/json,.json" aria-label="Realm file" />
        <input name="owner" placeholder="New owner (optional)" />
        <button type="submit">Import</button>
      </form>
      <Problem error={error} />
      {done ? <p class="ok">Imported as realm {done}.</p> : null}
    </Panel>
  );
}
