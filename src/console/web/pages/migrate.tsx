import { useState } from "preact/hooks";
import { api } from "../api.ts";
import { when } from "../lib/format.ts";
import { Table } from "../table.tsx";
import type { Answer, Item } from "../types.ts";
import { Action, Badge, Empty, Page, Panel, Problem, Show, useLoad } from "../ui.tsx";

type Found = Item<Answer<"migrate::scan">["frameworks"]>;
type Report = Answer<"migrate::openclaw">;
type History = Extract<Answer<"migrate::report">, { reports: unknown }>;

/** Migration from other agent frameworks (admin): find them, try a dry run, migrate, read the reports. */
export function MigratePage(props: { admin: boolean }) {
  if (!props.admin) return <Problem error="Migration writes the service's files: it needs an admin key." />;
  return <Migrations />;
}

function Migrations() {
  const [baseDir, setBaseDir] = useState("");
  const scan = useLoad(
    () =>
      api<Answer<"migrate::scan">>(
        `/api/migrate/scan${baseDir ? `?baseDir=${encodeURIComponent(baseDir)}` : ""}`,
      ),
    [baseDir],
  );
  const history = useLoad(() => api<History>("/api/migrate/report?format=json"), []);
  const [report, setReport] = useState<Report>();
  const migrate = async (found: Found, dryRun: boolean) => {
    setReport(
      await api<Report>(`/api/migrate/${found.framework}`, {
        body: { dryRun, ...(found.configPath ? { configPath: found.configPath } : {}) },
      }),
    );
    history.reload();
  };
  const rescan = (event: Event) => {
    event.preventDefault();
    setBaseDir(String(new FormData(event.currentTarget as HTMLFormElement).get("baseDir") ?? "").trim());
  };
  return (
    <Page title="Migrate">
      <div class="grid">
        <Panel title="Frameworks found" wide>
          <form class="inline" onSubmit={rescan}>
            <input name="baseDir" placeholder="Directory to look in (default: the service user's home)" />
            <button type="submit">Scan</button>
          </form>
          <Show loaded={scan}>
            {(value) => (
              <>
                <p class="muted">
                  {value.summary.found} of {value.summary.scanned} frameworks found,{" "}
                  {value.summary.migratable} migratable.
                </p>
                <Table
                  rows={value.frameworks}
                  rowKey={(found) => found.framework}
                  columns={[
                    { head: "Framework", cell: (found) => found.framework },
                    { head: "Found", cell: (found) => <Badge value={found.detected ? "found" : "absent"} /> },
                    { head: "Version", cell: (found) => found.version ?? "—" },
                    { head: "Where", cell: (found) => found.locations.join(", ") || "—" },
                    {
                      head: "Migrate",
                      cell: (found) =>
                        found.migratable ? (
                          <span class="row-actions">
                            <Action label="Dry run" run={() => migrate(found, true)} />
                            <Action label="Migrate" kind="primary" run={() => migrate(found, false)} />
                          </span>
                        ) : (
                          "—"
                        ),
                    },
                  ]}
                />
              </>
            )}
          </Show>
        </Panel>
        {report ? <ReportView report={report} /> : null}
        <Panel title="Reports" wide>
          <Show
            loaded={history}
            empty={(value) => value.reports.length === 0}
            whenEmpty="No migrations yet (dry runs are not kept): a dry run above shows what one would write."
          >
            {(value) => (
              <>
                <p class="muted">
                  {value.aggregated.reports} {value.aggregated.reports === 1 ? "run" : "runs"}:{" "}
                  {value.aggregated.totals.migrated} migrated, {value.aggregated.totals.skipped} skipped,{" "}
                  {value.aggregated.totals.errors} errors.
                </p>
                <ul class="list">
                  {value.reports.map((entry) => (
                    <li key={entry.id}>
                      <span>
                        {entry.framework} {entry.dryRun ? <Badge value="dry run" /> : null} {entry.configPath}
                      </span>
                      <small>
                        {when(entry.startedAt)} · {entry.summary.migrated} migrated, {entry.summary.unchanged}{" "}
                        unchanged, {entry.summary.skipped} skipped, {entry.summary.errors} errors
                      </small>
                    </li>
                  ))}
                </ul>
                <Action label="Download as Markdown" run={downloadMarkdown} />
              </>
            )}
          </Show>
        </Panel>
      </div>
    </Page>
  );
}

async function downloadMarkdown() {
  const { markdown } = await api<{ markdown: string }>("/api/migrate/report?format=markdown");
  const link = document.createElement("a");
  link.href = URL.createObjectURL(new Blob([markdown], { type: "text/markdown" }));
  link.download = "migration-report.md";
  link.click();
  URL.revokeObjectURL(link.href);
}

function ReportView(props: { report: Report }) {
  const { report } = props;
  const { summary } = report;
  return (
    <Panel title={`${report.framework}: ${report.dryRun ? "dry run" : "migrated"}`} wide>
      <dl class="facts">
        <dt>From</dt>
        <dd>
          {report.configPath} {report.version ? `(${report.version})` : ""}
        </dd>
        <dt>Outcome</dt>
        <dd>
          {summary.migrated} {report.dryRun ? "would be written" : "migrated"}, {summary.unchanged} unchanged,{" "}
          {summary.skipped} skipped, {summary.flagged} to check, {summary.errors} errors
        </dd>
      </dl>
      {report.errors.map((error) => (
        <Problem
          key={`${error.file}:${error.message}`}
          error={`${error.file ? `${error.file}: ` : ""}${error.message}`}
        />
      ))}
      {report.items.length ? (
        <Table
          rows={report.items}
          rowKey={(item) => `${item.type}:${item.path}`}
          columns={[
            { head: "Type", cell: (item) => item.type },
            { head: "Name", cell: (item) => item.name },
            { head: "File", cell: (item) => <code>{item.path}</code> },
            { head: "Status", cell: (item) => <Badge value={item.status.replace("_", " ")} /> },
          ]}
        />
      ) : (
        <Empty>Nothing to write.</Empty>
      )}
      <Listed
        title="Skipped"
        entries={report.skipped.map((entry) => `${entry.type} ${entry.name}: ${entry.reason}`)}
      />
      <Listed
        title="To check"
        entries={report.flags.map((flag) => `${flag.type} ${flag.name}: ${flag.message}`)}
      />
      <Listed
        title="Secrets (kept in the vault; names only)"
        entries={report.secrets.map(
          (secret) => `${secret.vaultName} from ${secret.source}: ${secret.status}`,
        )}
      />
    </Panel>
  );
}

function Listed(props: { title: string; entries: string[] }) {
  if (props.entries.length === 0) return null;
  return (
    <section>
      <h3>{props.title}</h3>
      <ul class="list">
        {props.entries.map((entry) => (
          <li key={entry}>{entry}</li>
        ))}
      </ul>
    </section>
  );
}
