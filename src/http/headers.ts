/** The four security headers of the specification, on every response. */
export const securityHeaders: Record<string, string> = {
  "X-Content-Type-Options": "nosniff",
  "X-Frame-Options": "DENY",
  "X-XSS-Protection": "1; mode=block",
  "Strict-Transport-Security": "max-age=31536000; includeSubDomains",
};

/**
 * CORS as specified: any origin, GET/POST/PUT/DELETE/OPTIONS (and PATCH), any header. Browsers do not
 * let `*` cover Authorization, so it is named as well; otherwise a browser client could never send its key.
 */
export const corsHeaders: Record<string, string> = {
  "Access-Control-Allow-Origin": "*",
  "Access-Control-Allow-Methods": "GET, POST, PUT, PATCH, DELETE, OPTIONS",
  "Access-Control-Allow-Headers": "*, Authorization",
  "Access-Control-Expose-Headers":
    "RateLimit-Limit, RateLimit-Remaining, RateLimit-Reset, Retry-After, X-Request-Id",
  "Access-Control-Max-Age": "86400",
};

export const everyResponseHeaders: Record<string, string> = { ...securityHeaders, ...corsHeaders };
