import type { ComponentChildren } from "preact";

/** One column of a Table: its heading (empty for a column of buttons) and what a row shows in it. */
export interface Column<T> {
  head: string;
  cell: (row: T) => ComponentChildren;
  /** The cells' class (`row-actions` for a column of buttons). */
  class?: string;
}

/**
 * Rows of records as a table, one per record, every page's tables alike: a heading row, then one row
 * per record with a cell per column. What shows when there are none is the page's (Show's whenEmpty).
 */
export function Table<T>(props: {
  rows: readonly T[];
  columns: ReadonlyArray<Column<T>>;
  /** Stable per record, so a reload updates rows in place rather than redrawing them. */
  rowKey: (row: T) => string | number;
  rowClass?: (row: T) => string;
}) {
  const { columns } = props;
  return (
    <table>
      <thead>
        <tr>
          {columns.map((column, index) => (
            <th key={index}>{column.head}</th>
          ))}
        </tr>
      </thead>
      <tbody>
        {props.rows.map((row) => (
          <tr key={props.rowKey(row)} class={props.rowClass?.(row)}>
            {columns.map((column, index) => (
              <td key={index} class={column.class}>
                {column.cell(row)}
              </td>
            ))}
          </tr>
        ))}
      </tbody>
    </table>
  );
}
