import { api } from "../../api.ts";
import type { Agent, Answer, HierarchyTreeNode } from "../../types.ts";
import { Action, ApiForm, Show, useLoad } from "../../ui.tsx";

type TreeNode = HierarchyTreeNode;

/** The org chart: each agent with its title and capabilities, its reports beneath it. */
export function Hierarchy(props: { realmId: string; agents: Agent[] }) {
  const tree = useLoad(
    () => api<Answer<"hierarchy::tree">>(`/api/hierarchy/${encodeURIComponent(props.realmId)}/tree`),
    [props.realmId],
  );
  const names = new Map(props.agents.map((agent) => [agent.id, agent.name]));
  const node = (entry: TreeNode) => (
    <li key={entry.agentId}>
      <div class="org-node">
        <b>{names.get(entry.agentId) ?? entry.agentId}</b>
        <small>{entry.title || "—"}</small>
        {entry.capabilities.length ? <small>{entry.capabilities.join(", ")}</small> : null}
        <Action
          label="Remove"
          run={() =>
            api(`/api/hierarchy/${encodeURIComponent(props.realmId)}/${encodeURIComponent(entry.agentId)}`, {
              method: "DELETE",
            }).then(tree.reload)
          }
        />
      </div>
      {entry.reports.length ? <ul>{entry.reports.map(node)}</ul> : null}
    </li>
  );
  const byName = (name: string) => props.agents.find((agent) => agent.name === name)?.id;
  const place = (
    <ApiForm
      submit="Place in the chart"
      fields={[
        { name: "agent", label: "Agent", options: props.agents.map((agent) => agent.name) },
        {
          name: "manager",
          label: "Reports to",
          options: ["nobody (a root)", ...props.agents.map((agent) => agent.name)],
        },
        { name: "title", label: "Title" },
        { name: "capabilities", label: "Capabilities", placeholder: "comma separated" },
      ]}
      run={({ agent, manager, title, capabilities }) =>
        api("/api/hierarchy", {
          body: {
            realmId: props.realmId,
            agentId: byName(agent ?? ""),
            reportsTo: byName(manager ?? "") ?? null,
            ...(title ? { title } : {}),
            ...(capabilities
              ? {
                  capabilities: capabilities
                    .split(",")
                    .map((entry) => entry.trim())
                    .filter(Boolean),
                }
              : {}),
          },
        })
      }
      onDone={tree.reload}
    />
  );
  return (
    <>
      {props.agents.length > 0 ? place : null}
      <Show
        loaded={tree}
        empty={(value) => value.roots.length === 0}
        whenEmpty="No org chart yet: POST /api/hierarchy places agents in it."
      >
        {(value) => <ul class="org">{value.roots.map(node)}</ul>}
      </Show>
    </>
  );
}
