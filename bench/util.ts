import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";

export interface Measurement {
  name: string;
  opsPerSec: number;
}

/** Runs `op` sequentially for about `ms` milliseconds (after a warm-up) and returns operations per second. */
export async function measure(name: string, op: (i: number) => unknown, ms = 2000): Promise<Measurement> {
  for (let i = 0; i < 2000; i++) await op(i);
  let count = 0;
  const start = performance.now();
  let elapsed = 0;
  while (elapsed < ms) {
    for (let i = 0; i < 500; i++) await op(count++);
    elapsed = performance.now() - start;
  }
  return { name, opsPerSec: (count / elapsed) * 1000 };
}

export function report(title: string, subject: Measurement, baseline: Measurement, target?: number): void {
  const ratio = subject.opsPerSec / baseline.opsPerSec;
  const verdict =
    target === undefined
      ? ""
      : ratio >= target
        ? ` (target ≥ ${target}: met)`
        : ` (target ≥ ${target}: MISSED)`;
  console.log(`\n## ${title}`);
  console.log(`  ${baseline.name.padEnd(44)} ${Math.round(baseline.opsPerSec).toLocaleString("en")} ops/s`);
  console.log(`  ${subject.name.padEnd(44)} ${Math.round(subject.opsPerSec).toLocaleString("en")} ops/s`);
  console.log(`  ratio ${ratio.toFixed(2)}${verdict}`);
}

export function tempDir(): { path: string; remove(): void } {
  const path = mkdtempSync(join(tmpdir(), "agentos-bench-"));
  return { path, remove: () => rmSync(path, { recursive: true, force: true }) };
}
