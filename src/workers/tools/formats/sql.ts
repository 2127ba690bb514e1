import { z } from "zod";
import { badRequest } from "../../../shared/errors.ts";

const identifier = z
  .string()
  .regex(
    /^[A-Za-z_][A-Za-z0-9_]{0,62}(\.[A-Za-z_][A-Za-z0-9_]{0,62})?$/,
    "identifiers are letters, digits and _ (optionally schema.name)",
  );
const scalar = z.union([z.string().max(100_000), z.number(), z.boolean(), z.null()]);
const condition = z.union([
  scalar,
  z.strictObject({
    op: z.enum(["=", "!=", "<", "<=", ">", ">=", "like", "in", "is null", "is not null"]),
    value: z.union([scalar, z.array(scalar).max(1000)]).optional(),
  }),
]);

export const sqlInput = z.strictObject({
  operation: z.enum(["select", "insert", "update", "delete"]),
  table: identifier,
  dialect: z.enum(["postgres", "sqlite", "mysql"]).default("postgres"),
  columns: z.array(identifier).max(200).optional().describe("select: the columns (default *)"),
  values: z.record(identifier, scalar).optional().describe("insert and update: column → value"),
  where: z
    .record(identifier, condition)
    .optional()
    .describe("column → value (equality) or {op, value}; all must hold"),
  orderBy: z
    .array(z.strictObject({ column: identifier, direction: z.enum(["asc", "desc"]).default("asc") }))
    .max(20)
    .optional(),
  limit: z.number().int().min(1).max(1_000_000).optional(),
  offset: z.number().int().min(0).optional(),
});

/** A statement with quoted identifiers and a placeholder for every value ($1… for postgres, ? otherwise). */
export function buildSql(input: z.output<typeof sqlInput>): { sql: string; params: unknown[] } {
  const params: unknown[] = [];
  const quote = (name: string) =>
    name
      .split(".")
      .map((part) => (input.dialect === "mysql" ? `\`${part}\`` : `"${part}"`))
      .join(".");
  const placeholder = (value: unknown) => {
    params.push(value);
    return input.dialect === "postgres" ? `$${params.length}` : "?";
  };
  const where = () => {
    const entries = Object.entries(input.where ?? {});
    if (entries.length === 0) {
      if (input.operation === "update" || input.operation === "delete") {
        throw badRequest(`${input.operation} without where would touch every row: give where`);
      }
      return "";
    }
    const parts = entries.map(([column, cond]) => {
      const { op, value } = typeof cond === "object" && cond !== null ? cond : { op: "=", value: cond };
      if (op === "is null" || op === "is not null") return `${quote(column)} ${op.toUpperCase()}`;
      if (op === "in") {
        if (!Array.isArray(value) || value.length === 0)
          throw badRequest(`${column}: in needs a non-empty array`);
        return `${quote(column)} IN (${value.map(placeholder).join(", ")})`;
      }
      if (Array.isArray(value)) throw badRequest(`${column}: only in takes an array`);
      if (value === null) return `${quote(column)} ${op === "!=" ? "IS NOT NULL" : "IS NULL"}`;
      return `${quote(column)} ${op.toUpperCase()} ${placeholder(value)}`;
    });
    return ` WHERE ${parts.join(" AND ")}`;
  };
  const values = Object.entries(input.values ?? {});
  let sql: string;
  switch (input.operation) {
    case "select": {
      const columns = input.columns?.length ? input.columns.map(quote).join(", ") : "*";
      sql = `SELECT ${columns} FROM ${quote(input.table)}${where()}`;
      if (input.orderBy?.length)
        sql += ` ORDER BY ${input.orderBy.map((o) => `${quote(o.column)} ${o.direction.toUpperCase()}`).join(", ")}`;
      if (input.limit !== undefined) sql += ` LIMIT ${input.limit}`;
      if (input.offset !== undefined) sql += ` OFFSET ${input.offset}`;
      break;
    }
    case "insert":
      if (values.length === 0) throw badRequest("insert needs values");
      sql = `INSERT INTO ${quote(input.table)} (${values.map(([c]) => quote(c)).join(", ")}) VALUES (${values.map(([, v]) => placeholder(v)).join(", ")})`;
      break;
    case "update":
      if (values.length === 0) throw badRequest("update needs values");
      sql = `UPDATE ${quote(input.table)} SET ${values.map(([c, v]) => `${quote(c)} = ${placeholder(v)}`).join(", ")}`;
      sql += where();
      break;
    case "delete":
      sql = `DELETE FROM ${quote(input.table)}${where()}`;
      break;
  }
  return { sql, params };
}
