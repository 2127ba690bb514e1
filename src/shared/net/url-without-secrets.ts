/** A URL fit for an error message: no user:password and no query string (either may carry a key). */
export function urlWithoutSecrets(url: string): string {
  try {
    const parsed = new URL(url);
    parsed.username = "";
    parsed.password = "";
    parsed.search = "";
    return parsed.href;
  } catch {
    return "(invalid URL)";
  }
}
