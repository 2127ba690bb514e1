/** Milliseconds as people read them: 850 ms, 1.2 s, 3 min 5 s. */
export function duration(ms: number): string {
  if (!Number.isFinite(ms) || ms < 0) return "—";
  if (ms < 1000) return `${Math.round(ms)} ms`;
  if (ms < 60_000) return `${(ms / 1000).toFixed(ms < 10_000 ? 1 : 0)} s`;
  const minutes = Math.floor(ms / 60_000);
  const seconds = Math.round((ms % 60_000) / 1000);
  return seconds === 0 ? `${minutes} min` : `${minutes} min ${seconds} s`;
}

/** An ISO time as a short local date and time, or the text unchanged when it is not one. */
export function when(iso: string | null | undefined): string {
  if (!iso) return "—";
  const date = new Date(iso);
  return Number.isNaN(date.getTime()) ? iso : date.toLocaleString();
}

/** A value shown in a cell: text as is, anything else as compact JSON, cut to `max` characters. */
export function preview(value: unknown, max = 160): string {
  const text = typeof value === "string" ? value : (JSON.stringify(value) ?? "");
  return text.length > max ? `${text.slice(0, max - 1)}…` : text;
}

/** Share of a limit in percent, kept within [0, 100] for a bar (an overspend shows as full). */
export function percent(part: number, whole: number): number {
  if (!(whole > 0) || Number.isNaN(part)) return 0;
  const share = (part / whole) * 100;
  return Number.isFinite(share) ? Math.max(0, Math.min(100, share)) : share > 0 ? 100 : 0;
}

/**
 * Relations typed as `type: target` pairs separated by semicolons or new lines ("worked_on: Analytical
 * Engine; knows: Babbage"); a pair without a colon or with an empty side is refused by name.
 */
export function parseRelations(text: string): Array<{ type: string; target: string }> {
  return text
    .split(/[;\n]/)
    .map((pair) => pair.trim())
    .filter(Boolean)
    .map((pair) => {
      const colon = pair.indexOf(":");
      const type = pair.slice(0, colon).trim();
      const target = pair.slice(colon + 1).trim();
      if (colon < 0 || !type || !target) throw new Error(`"${pair}" is not a relation: write type: target`);
      return { type, target };
    });
}

/** Text a person typed as JSON, or an error that names the field and what is wrong. */
export function parseJson(text: string, field: string): unknown {
  try {
    return JSON.parse(text);
  } catch (error) {
    throw new Error(`${field} is not JSON: ${(error as Error).message}`);
  }
}
