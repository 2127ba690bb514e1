/** The four security headers of the specification. */
export const securityHeaders: Record<string, string> = {
  "X-Content-Type-Options": "nosniff",
  "X-Frame-Options": "DENY",
  "X-XSS-Protection": "1; mode=block",
  "Strict-Transport-Security": "max-age=31536000; includeSubDomains",
};

/**
 * On every response: the security headers, the CORS headers a browser reads on actual responses, and
 * no-store, since answers hold keys, secrets and conversations that no browser or proxy cache may keep
 * (the console's own files say otherwise for themselves).
 */
export const everyResponseHeaders: Record<string, string> = {
  ...securityHeaders,
  "Cache-Control": "no-store",
  "Access-Control-Allow-Origin": "*",
  "Access-Control-Expose-Headers":
    "RateLimit-Limit, RateLimit-Remaining, RateLimit-Reset, Retry-After, X-Request-Id",
};

/**
 * CORS preflight answers as specified: any origin, GET/POST/PUT/DELETE/OPTIONS (and PATCH), any header.
 * Browsers do not let `*` cover Authorization, so it is named too; otherwise no browser could send a key.
 * Browsers read these only on preflights, so other responses do not carry them.
 */
export const preflightHeaders: Record<string, string> = {
  "Access-Control-Allow-Methods": "GET, POST, PUT, PATCH, DELETE, OPTIONS",
  "Access-Control-Allow-Headers": "*, Authorization",
  "Access-Control-Max-Age": "86400",
};
