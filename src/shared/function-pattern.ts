/** `*` matches any run of characters; everything else is literal (DESIGN.md §5 capability patterns). */
export function matchesPattern(pattern: string, id: string): boolean {
  if (!pattern.includes("*")) return pattern === id;
  const source = pattern
    .split("*")
    .map((part) => part.replace(/[.+?^${}()|[\]\\]/g, "\\$&"))
    .join(".*");
  return new RegExp(`^${source}$`).test(id);
}
