export interface Placed {
  id: string;
  x: number;
  y: number;
}

/**
 * A force layout: nodes start evenly on a circle (so the same graph is always drawn the same way),
 * then edges pull their ends together and every pair pushes apart, cooling down over the iterations.
 * Positions end inside the `width` × `height` box with a margin.
 */
export function forceLayout(
  ids: string[],
  edges: Array<[string, string]>,
  size: { width: number; height: number },
  iterations = 200,
): Placed[] {
  const n = ids.length;
  if (n === 0) return [];
  const index = new Map(ids.map((id, i) => [id, i]));
  const x = ids.map((_, i) => Math.cos((2 * Math.PI * i) / n) * 100);
  const y = ids.map((_, i) => Math.sin((2 * Math.PI * i) / n) * 100);
  const links = edges
    .map(([a, b]) => [index.get(a), index.get(b)] as const)
    .filter(
      (link): link is readonly [number, number] =>
        link[0] !== undefined && link[1] !== undefined && link[0] !== link[1],
    );
  const ideal = 80;
  for (let step = 0; step < iterations; step++) {
    const heat = 10 * (1 - step / iterations) + 0.5;
    const dx = new Array<number>(n).fill(0);
    const dy = new Array<number>(n).fill(0);
    for (let i = 0; i < n; i++) {
      for (let j = i + 1; j < n; j++) {
        const ex = (x[i] as number) - (x[j] as number);
        const ey = (y[i] as number) - (y[j] as number);
        const distance = Math.max(1, Math.hypot(ex, ey));
        const push = (ideal * ideal) / distance / distance;
        dx[i] = (dx[i] as number) + ex * push;
        dy[i] = (dy[i] as number) + ey * push;
        dx[j] = (dx[j] as number) - ex * push;
        dy[j] = (dy[j] as number) - ey * push;
      }
    }
    for (const [a, b] of links) {
      const ex = (x[a] as number) - (x[b] as number);
      const ey = (y[a] as number) - (y[b] as number);
      const distance = Math.max(1, Math.hypot(ex, ey));
      const pull = (distance - ideal) / distance / 2;
      dx[a] = (dx[a] as number) - ex * pull;
      dy[a] = (dy[a] as number) - ey * pull;
      dx[b] = (dx[b] as number) + ex * pull;
      dy[b] = (dy[b] as number) + ey * pull;
    }
    for (let i = 0; i < n; i++) {
      const length = Math.max(1e-9, Math.hypot(dx[i] as number, dy[i] as number));
      const move = Math.min(length, heat);
      x[i] = (x[i] as number) + ((dx[i] as number) / length) * move;
      y[i] = (y[i] as number) + ((dy[i] as number) / length) * move;
    }
  }
  return fitInto(ids, x, y, size);
}

function fitInto(ids: string[], x: number[], y: number[], size: { width: number; height: number }): Placed[] {
  const margin = 40;
  const [minX, maxX] = [Math.min(...x), Math.max(...x)];
  const [minY, maxY] = [Math.min(...y), Math.max(...y)];
  const scale = Math.min(
    (size.width - 2 * margin) / Math.max(1, maxX - minX),
    (size.height - 2 * margin) / Math.max(1, maxY - minY),
    1.5,
  );
  const offsetX = (size.width - (maxX - minX) * scale) / 2;
  const offsetY = (size.height - (maxY - minY) * scale) / 2;
  return ids.map((id, i) => ({
    id,
    x: offsetX + ((x[i] as number) - minX) * scale,
    y: offsetY + ((y[i] as number) - minY) * scale,
  }));
}
