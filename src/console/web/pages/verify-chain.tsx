import { useState } from "preact/hooks";
import { api } from "../api.ts";
import type { Answer } from "../types.ts";
import { Action } from "../ui.tsx";

type Verification = Answer<"security::audit_verify">;

/** A button that verifies a hash chain (the audit log, a realm's activity) and says what it found. */
export function VerifyChain(props: { chain: string; path: string }) {
  const [verified, setVerified] = useState<Verification>();
  return (
    <>
      <Action
        label={`Verify the ${props.chain}`}
        run={async () => setVerified(await api<Verification>(props.path))}
      />
      {verified ? (
        <p class={verified.valid ? "ok" : "problem"} role="status">
          {verified.valid
            ? `The ${props.chain} is intact: ${verified.length} entries verified.`
            : `The ${props.chain} is broken at entry ${verified.brokenAt}: ${verified.reason ?? ""}`}
        </p>
      ) : null}
    </>
  );
}
