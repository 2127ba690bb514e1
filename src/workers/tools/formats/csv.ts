import { badRequest } from "../../../shared/errors.ts";

/**
 * RFC 4180 CSV: fields may be quoted, quotes inside doubled, and quoted fields may hold the delimiter and
 * line breaks (CRLF or LF). An unterminated quote or text after a closing quote is an error naming the line.
 */
export function parseCsv(text: string, delimiter = ","): string[][] {
  const rows: string[][] = [];
  let row: string[] = [];
  let field = "";
  let line = 1;
  let i = 0;
  let quotedAt = 0;
  const endField = () => {
    row.push(field);
    field = "";
  };
  const endRow = () => {
    endField();
    rows.push(row);
    row = [];
  };
  while (i < text.length) {
    const c = text[i] as string;
    if (c === '"' && field === "" && quotedAt === 0) {
      quotedAt = line;
      i++;
      for (;;) {
        const q = text.indexOf('"', i);
        if (q < 0) throw badRequest(`CSV: the quoted field opened on line ${quotedAt} is never closed`);
        const chunk = text.slice(i, q);
        line += chunk.split("\n").length - 1;
        field += chunk;
        if (text[q + 1] === '"') {
          field += '"';
          i = q + 2;
        } else {
          i = q + 1;
          break;
        }
      }
      const next = text[i];
      if (next !== undefined && next !== delimiter && next !== "\n" && next !== "\r") {
        throw badRequest(`CSV line ${line}: text after a closing quote`);
      }
      continue;
    }
    quotedAt = 0;
    if (c === delimiter) {
      endField();
      i++;
    } else if (c === "\n" || c === "\r") {
      endRow();
      i += c === "\r" && text[i + 1] === "\n" ? 2 : 1;
      line++;
    } else {
      // A quote inside an unquoted field (5" screen) is kept as it is, as most readers do.
      field += c;
      i++;
    }
  }
  if (field !== "" || row.length > 0 || quotedAt !== 0) endRow();
  return rows;
}

/** Rows written back as CSV, quoting only what needs it. */
export function formatCsv(rows: string[][], delimiter = ","): string {
  const needsQuotes = new RegExp(`["\\r\\n${delimiter.replace(/[\\^\]-]/g, "\\$&")}]`);
  return rows
    .map((row) =>
      row
        .map((field) =>
          needsQuotes.test(field) || (field === "" && row.length === 1)
            ? `"${field.replace(/"/g, '""')}"`
            : field,
        )
        .join(delimiter),
    )
    .join("\n");
}
