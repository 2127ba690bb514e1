import { useState } from "preact/hooks";
import { api } from "../../api.ts";
import type { Answer, Item } from "../../types.ts";
import { ApiForm, Badge, Show, useLoad } from "../../ui.tsx";

type Directive = Item<Answer<"directive::list">["directives"]>;

/** The realm's directives as a tree; a chosen one shows its ancestry up to the root. */
export function Directives(props: { realmId: string }) {
  const base = `/api/directives/${encodeURIComponent(props.realmId)}`;
  const directives = useLoad(() => api<Answer<"directive::list">>(`${base}?limit=200`), [props.realmId]);
  const [chosen, setChosen] = useState<string>();
  const ancestry = useLoad<Pick<Answer<"directive::ancestry">, "ancestry">>(
    () =>
      chosen
        ? api<Answer<"directive::ancestry">>(`${base}/${encodeURIComponent(chosen)}/ancestry`)
        : Promise.resolve({ ancestry: [] }),
    [chosen],
  );
  const form = (
    <ApiForm
      submit="Add directive"
      fields={[
        { name: "title", label: "Title", required: true },
        { name: "level", label: "Level", options: ["realm", "team", "agent"] },
        { name: "parentId", label: "Parent id", placeholder: "empty: a root" },
      ]}
      run={({ title, level, parentId }) =>
        api("/api/directives", {
          body: { realmId: props.realmId, title, level, ...(parentId ? { parentId } : {}) },
        })
      }
      onDone={directives.reload}
    />
  );
  return (
    <>
      {form}
      <Show
        loaded={directives}
        empty={(value) => value.directives.length === 0}
        whenEmpty="No directives yet: POST /api/directives sets the realm's goals."
      >
        {({ directives: list }) => {
          const ids = new Set(list.map((directive) => directive.id));
          const children = (parent: string | undefined) =>
            list.filter((directive) =>
              parent === undefined
                ? !directive.parentId || !ids.has(directive.parentId)
                : directive.parentId === parent,
            );
          const branch = (parent: string | undefined, seen: Set<string>) => (
            <ul class="tree">
              {children(parent)
                .filter((directive) => !seen.has(directive.id))
                .map((directive) => (
                  <li key={directive.id}>
                    <button type="button" class="link" onClick={() => setChosen(directive.id)}>
                      {directive.title}
                    </button>{" "}
                    <small>{directive.level}</small> <Badge value={directive.status} />
                    {branch(directive.id, new Set([...seen, directive.id]))}
                  </li>
                ))}
            </ul>
          );
          return (
            <div class="grid">
              <section class="panel">{branch(undefined, new Set())}</section>
              {chosen ? (
                <section class="panel">
                  <DirectiveEditor
                    key={chosen}
                    path={`${base}/${encodeURIComponent(chosen)}`}
                    directive={list.find((directive) => directive.id === chosen)}
                    onDone={directives.reload}
                  />
                  <h2>Ancestry</h2>
                  <ol class="ancestry">
                    {(ancestry.value?.ancestry ?? []).map((entry) => (
                      <li key={entry.id}>
                        {entry.title} <small>{entry.level}</small>
                      </li>
                    ))}
                  </ol>
                </section>
              ) : null}
            </div>
          );
        }}
      </Show>
    </>
  );
}

const STATUSES = ["Active", "Paused", "Complete", "Cancelled"] as const;
const PRIORITIES = ["", "critical", "high", "normal", "low"] as const;

/** Changes a directive's title, description, status and priority, on the condition it is as shown. */
function DirectiveEditor(props: { path: string; directive: Directive | undefined; onDone: () => void }) {
  const { directive } = props;
  if (!directive) return null;
  return (
    <>
      <h2>Edit</h2>
      <ApiForm
        submit="Save"
        fields={[
          { name: "title", label: "Title", required: true, value: directive.title },
          { name: "description", label: "Description", kind: "textarea", value: directive.description ?? "" },
          { name: "status", label: "Status", options: STATUSES, value: directive.status },
          {
            name: "priority",
            label: "Priority (empty: none)",
            options: PRIORITIES,
            value: directive.priority ?? "",
          },
        ]}
        run={({ title, description, status, priority }) =>
          api(props.path, {
            method: "PATCH",
            body: {
              title,
              description: description || null,
              status,
              priority: priority || null,
              expectedVersion: directive.version,
            },
          })
        }
        onDone={props.onDone}
      />
    </>
  );
}
