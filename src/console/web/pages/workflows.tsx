import { useState } from "preact/hooks";
import { api } from "../api.ts";
import { duration, parseJson, when } from "../lib/format.ts";
import { href, navigate } from "../router.ts";
import { Table } from "../table.tsx";
import type { Answer, Workflow } from "../types.ts";
import { ApiForm, Badge, DeleteAction, Field, Page, Panel, Problem, Show, useLoad } from "../ui.tsx";
import { StepGraph } from "./step-graph.tsx";

const EXAMPLE = JSON.stringify(
  {
    name: "summarise",
    steps: [{ name: "fetch", functionId: "tool::web_fetch", args: { url: "{{input.url}}" } }],
  },
  null,
  1,
);

export function WorkflowsPage() {
  const workflows = useLoad(() => api<Answer<"workflow::list">>("/api/workflows?limit=200"), []);
  return (
    <Page title="Workflows">
      <Panel title="New workflow" wide>
        <ApiForm
          submit="Create workflow"
          fields={[
            {
              name: "definition",
              label: "Definition (JSON)",
              kind: "textarea",
              required: true,
              placeholder: EXAMPLE,
            },
          ]}
          run={({ definition }) => {
            const body = parseJson(definition ?? "", "The definition");
            return api<Answer<"workflow::create">>("/api/workflows", { body }).then((created) =>
              navigate("workflows", created.id, created.realmId),
            );
          }}
        />
      </Panel>
      <Show
        loaded={workflows}
        empty={(list) => list.length === 0}
        whenEmpty="No workflows yet. Define one with POST /api/workflows or a file in workflows/."
      >
        {(list) => (
          <Table
            rows={list}
            rowKey={(workflow) => `${workflow.realmId}/${workflow.id}`}
            columns={[
              {
                head: "Name",
                cell: (workflow) => (
                  <a href={href("workflows", workflow.id, workflow.realmId)}>{workflow.name}</a>
                ),
              },
              { head: "Id", cell: (workflow) => workflow.id },
              { head: "Realm", cell: (workflow) => workflow.realmId },
              { head: "Steps", cell: (workflow) => workflow.steps.length },
              { head: "Version", cell: (workflow) => workflow.version },
              { head: "Updated", cell: (workflow) => when(workflow.updatedAt) },
            ]}
          />
        )}
      </Show>
    </Page>
  );
}

export function WorkflowPage(props: { id: string; realmId?: string }) {
  const realm = props.realmId ? `?realmId=${encodeURIComponent(props.realmId)}` : "";
  const id = encodeURIComponent(props.id);
  const workflow = useLoad(() => api<Workflow>(`/api/workflows/${id}${realm}`), [props.id, props.realmId]);
  const runs = useLoad(() => api<Answer<"workflow::runs">>(`/api/workflows/${id}/runs${realm}`), [props.id]);
  return (
    <Show loaded={workflow}>
      {(value) => (
        <Page
          title={value.name}
          actions={
            <DeleteAction
              question={`Delete the workflow ${value.name}? Its runs are kept.`}
              path={`/api/workflows/${id}${realm}`}
              onDone={() => navigate("workflows")}
            />
          }
        >
          <div class="grid">
            <Panel title="Steps" wide>
              <StepGraph steps={value.steps} />
              {value.missingFunctions?.length ? (
                <Problem error={`Not registered now: ${value.missingFunctions.join(", ")}`} />
              ) : null}
            </Panel>
            <Panel title="Run">
              <RunForm workflow={value} />
            </Panel>
            <Panel title="Definition">
              <EditForm key={value.version} workflow={value} onDone={workflow.reload} />
            </Panel>
            <Panel title="Runs">
              <Show
                loaded={runs}
                empty={(list) => list.runs.length === 0}
                whenEmpty="No runs yet: start one with Run."
              >
                {(list) => (
                  <ul class="list">
                    {list.runs.map((run) => (
                      <li key={run.runId}>
                        <a href={href("runs", run.runId)}>{run.runId}</a> <Badge value={run.status} />
                        <small>
                          {when(run.startedAt)}
                          {run.finishedAt
                            ? ` · ${duration(Date.parse(run.finishedAt) - Date.parse(run.startedAt))}`
                            : ""}
                        </small>
                      </li>
                    ))}
                  </ul>
                )}
              </Show>
            </Panel>
          </div>
        </Page>
      )}
    </Show>
  );
}

/** The definition as JSON to change and save; saved only if nobody changed it meanwhile (its version). */
function EditForm(props: { workflow: Workflow; onDone: () => void }) {
  const { workflow } = props;
  const [error, setError] = useState<string>();
  const editable = { name: workflow.name, description: workflow.description, steps: workflow.steps };
  const save = async (event: Event) => {
    event.preventDefault();
    const text = String(new FormData(event.currentTarget as HTMLFormElement).get("definition") ?? "");
    setError(undefined);
    try {
      const changes = parseJson(text, "The definition") as Record<string, unknown>;
      await api(`/api/workflows/${encodeURIComponent(workflow.id)}`, {
        method: "PATCH",
        body: { ...changes, realmId: workflow.realmId, expectedVersion: workflow.version },
      });
      props.onDone();
    } catch (caught) {
      setError((caught as Error).message);
    }
  };
  return (
    <form class="form" onSubmit={save}>
      <Field
        label={`Version ${workflow.version}`}
        hint="name, description and steps; saving makes the next version"
      >
        <textarea name="definition" rows={12} class="code" defaultValue={JSON.stringify(editable, null, 2)} />
      </Field>
      <button type="submit">Save</button>
      <Problem error={error} />
    </form>
  );
}

function RunForm(props: { workflow: Workflow }) {
  const [error, setError] = useState<string>();
  const run = async (event: Event) => {
    event.preventDefault();
    const text = String(new FormData(event.currentTarget as HTMLFormElement).get("input") ?? "").trim();
    setError(undefined);
    try {
      const input = text === "" ? undefined : parseJson(text, "The input");
      const started = await api<Answer<"workflow::run">>("/api/workflows/run", {
        body: { workflowId: props.workflow.id, realmId: props.workflow.realmId, input, async: true },
      });
      navigate("runs", started.runId);
    } catch (caught) {
      setError((caught as Error).message);
    }
  };
  return (
    <form class="form" onSubmit={run}>
      <Field label="Input (JSON)" hint="Empty: no input">
        <textarea name="input" rows={4} placeholder='{"topic": "pricing"}' />
      </Field>
      <button type="submit" class="primary">
        Run
      </button>
      <Problem error={error} />
    </form>
  );
}
