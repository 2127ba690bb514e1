import { describe, expect, it } from "vitest";
import { MAX_COMMENTS, nextCommentCount } from "../../../src/workers/mission/lifecycle.ts";
import type { Mission } from "../../../src/workers/mission/schema.ts";

const mission = (commentCount: number) =>
  ({ id: "msn-1", commentCount }) as Pick<Mission, "id" | "commentCount">;

describe("a mission's comments", () => {
  it("are counted one more each, up to MAX_COMMENTS, then refused with a 409 naming the limit", () => {
    expect(nextCommentCount(mission(0))).toBe(1);
    expect(nextCommentCount(mission(MAX_COMMENTS - 1))).toBe(MAX_COMMENTS);
    expect(() => nextCommentCount(mission(MAX_COMMENTS))).toThrow(
      expect.objectContaining({ status: 409, message: expect.stringContaining(`${MAX_COMMENTS} comments`) }),
    );
  });
});
