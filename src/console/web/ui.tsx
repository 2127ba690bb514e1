import type { ComponentChildren } from "preact";
import { useCallback, useEffect, useState } from "preact/hooks";
import { api } from "./api.ts";

/** Data loaded from the API: the value, the error the API gave, and a way to load it again. */
export interface Loaded<T> {
  value: T | undefined;
  error: string | undefined;
  loading: boolean;
  reload: () => void;
}

export function useLoad<T>(load: () => Promise<T>, deps: unknown[]): Loaded<T> {
  const [state, setState] = useState<{ value?: T; error?: string; loading: boolean }>({ loading: true });
  const [round, setRound] = useState(0);
  useEffect(() => {
    let current = true;
    setState((before) => ({ ...before, loading: true }));
    load().then(
      (value) => current && setState({ value, loading: false }),
      (error: Error) => current && setState({ error: error.message, loading: false }),
    );
    return () => {
      current = false;
    };
  }, [...deps, round]);
  const reload = useCallback(() => setRound((n) => n + 1), []);
  return { value: state.value, error: state.error, loading: state.loading, reload };
}

export function Page(props: { title: string; actions?: ComponentChildren; children: ComponentChildren }) {
  return (
    <section class="page">
      <header class="page-head">
        <h1>{props.title}</h1>
        <div class="actions">{props.actions}</div>
      </header>
      {props.children}
    </section>
  );
}

export function Panel(props: { title: string; children: ComponentChildren; wide?: boolean }) {
  return (
    <section class={props.wide ? "panel wide" : "panel"}>
      <h2>{props.title}</h2>
      {props.children}
    </section>
  );
}

/** The API's message, as it gave it. */
export function Problem(props: { error: string | undefined }) {
  return props.error ? (
    <p class="problem" role="alert">
      {props.error}
    </p>
  ) : null;
}

/** What to do when there is nothing yet. */
export function Empty(props: { children: ComponentChildren }) {
  return <p class="empty">{props.children}</p>;
}

/** A loaded value, or its loading state or error, or what to do when it is empty. */
export function Show<T>(props: {
  loaded: Loaded<T>;
  empty?: (value: T) => boolean;
  whenEmpty?: ComponentChildren;
  children: (value: T) => ComponentChildren;
}) {
  const { value, error, loading } = props.loaded;
  if (error) return <Problem error={error} />;
  if (value === undefined) return loading ? <p class="loading">Loading…</p> : null;
  if (props.empty?.(value)) return <Empty>{props.whenEmpty}</Empty>;
  return <>{props.children(value)}</>;
}

export function Field(props: { label: string; children: ComponentChildren; hint?: string }) {
  return (
    // biome-ignore lint/a11y/noLabelWithoutControl: the control is the child this wraps
    <label class="field">
      <span>{props.label}</span>
      {props.children}
      {props.hint ? <small>{props.hint}</small> : null}
    </label>
  );
}

/** A status as a coloured badge. */
export function Badge(props: { value: string }) {
  return <span class={`badge badge-${props.value.toLowerCase().replace(/[^a-z]/g, "")}`}>{props.value}</span>;
}

/** A button that runs an action, shows it is working, and shows the API's refusal. */
export function Action(props: { label: string; run: () => Promise<unknown>; kind?: "primary" | "danger" }) {
  const [busy, setBusy] = useState(false);
  const [error, setError] = useState<string>();
  const click = async () => {
    setBusy(true);
    setError(undefined);
    try {
      await props.run();
    } catch (caught) {
      setError((caught as Error).message);
    } finally {
      setBusy(false);
    }
  };
  return (
    <span class="action">
      <button type="button" class={props.kind ?? ""} disabled={busy} onClick={click}>
        {busy ? `${props.label}…` : props.label}
      </button>
      <Problem error={error} />
    </span>
  );
}

/** A danger button that asks first, then deletes what `path` names and tells `onDone`. */
export function DeleteAction(props: { label?: string; question: string; path: string; onDone: () => void }) {
  return (
    <Action
      label={props.label ?? "Delete"}
      kind="danger"
      run={async () => {
        if (!confirm(props.question)) return;
        await api(props.path, { method: "DELETE" });
        props.onDone();
      }}
    />
  );
}

export interface FormField {
  name: string;
  label: string;
  placeholder?: string;
  required?: boolean;
  /** A choice among these values instead of free text. */
  options?: readonly string[];
  /** What the field holds before it is changed (an edit form's current values). */
  value?: string;
  /** "checks": any number of the options, given to `run` one per line. */
  kind?: "text" | "number" | "textarea" | "checks";
}

function Control(props: { field: FormField }) {
  const { field } = props;
  if (field.kind === "checks")
    return (
      <span class="checks">
        {(field.options ?? []).map((option) => (
          <label key={option}>
            <input type="checkbox" name={field.name} value={option} /> {option}
          </label>
        ))}
      </span>
    );
  if (field.options)
    return (
      <select name={field.name}>
        {field.options.map((option) => (
          <option key={option} selected={option === field.value}>
            {option}
          </option>
        ))}
      </select>
    );
  if (field.kind === "textarea")
    return (
      <textarea
        name={field.name}
        rows={6}
        required={field.required}
        placeholder={field.placeholder}
        defaultValue={field.value}
      />
    );
  if (field.kind === "number")
    return (
      <input
        name={field.name}
        type="number"
        step="any"
        required={field.required}
        placeholder={field.placeholder}
      />
    );
  return (
    <input
      name={field.name}
      type="text"
      required={field.required}
      placeholder={field.placeholder}
      defaultValue={field.value}
    />
  );
}

/**
 * A small form for one API call: its fields as text, the call made with them on submit, the API's
 * refusal shown as it came, the form cleared once the call succeeded.
 */
export function ApiForm(props: {
  fields: FormField[];
  submit: string;
  run: (values: Record<string, string>) => Promise<unknown>;
  onDone?: () => void;
}) {
  const [error, setError] = useState<string>();
  const [busy, setBusy] = useState(false);
  const send = async (event: Event) => {
    event.preventDefault();
    const form = event.currentTarget as HTMLFormElement;
    const values: Record<string, string> = {};
    for (const [name, value] of new FormData(form)) {
      const text = String(value).trim();
      values[name] = name in values ? `${values[name]}\n${text}` : text;
    }
    setBusy(true);
    setError(undefined);
    try {
      await props.run(values);
      form.reset();
      props.onDone?.();
    } catch (caught) {
      setError((caught as Error).message);
    } finally {
      setBusy(false);
    }
  };
  return (
    <form class="api-form" onSubmit={send}>
      {props.fields.map((field) =>
        field.kind === "checks" ? (
          <fieldset key={field.name} class="field">
            <legend>{field.label}</legend>
            <Control field={field} />
          </fieldset>
        ) : (
          <Field key={field.name} label={field.label}>
            <Control field={field} />
          </Field>
        ),
      )}
      <button type="submit" disabled={busy}>
        {busy ? `${props.submit}…` : props.submit}
      </button>
      <Problem error={error} />
    </form>
  );
}
