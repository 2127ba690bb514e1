import { useEffect, useState } from "preact/hooks";

/** The page a location names: `#/agents/agent-1` → {page: "agents", id: "agent-1"}. */
export interface Route {
  page: string;
  id?: string;
  sub?: string;
}

const decode = (part: string) => {
  try {
    return decodeURIComponent(part);
  } catch {
    return part;
  }
};

export function parseRoute(hash: string): Route {
  const [page = "", id, sub] = hash.replace(/^#\/?/, "").split("/").map(decode);
  return { page: page || "agents", ...(id ? { id } : {}), ...(sub ? { sub } : {}) };
}

export const href = (...parts: string[]) => `#/${parts.map(encodeURIComponent).join("/")}`;

export function navigate(...parts: string[]): void {
  location.hash = href(...parts);
}

export function useRoute(): Route {
  const [route, setRoute] = useState(() => parseRoute(location.hash));
  useEffect(() => {
    const changed = () => setRoute(parseRoute(location.hash));
    addEventListener("hashchange", changed);
    return () => removeEventListener("hashchange", changed);
  }, []);
  return route;
}
