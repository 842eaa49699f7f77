/** A column of a {@link formatTable} table. */
export interface Column {
  readonly header: string;
  /** Numbers read best right-aligned. Default 'left'. */
  readonly align?: 'left' | 'right';
}

/** A Markdown table padded so it also reads well in a terminal. */
export function formatTable(columns: readonly Column[], rows: readonly (readonly string[])[]): string {
  const widths = columns.map((column, i) =>
    Math.max(column.header.length, 3, ...rows.map((row) => (row[i] ?? '').length)),
  );
  const line = (cells: readonly string[]) =>
    `| ${columns
      .map((column, i) => {
        const cell = cells[i] ?? '';
        const width = widths[i] as number;
        return column.align === 'right' ? cell.padStart(width) : cell.padEnd(width);
      })
      .join(' | ')} |`;
  const rule = `|${columns
    .map((column, i) => {
      const dashes = '-'.repeat((widths[i] as number) + 1);
      return column.align === 'right' ? `${dashes}:` : `${dashes}-`;
    })
    .join('|')}|`;
  return [line(columns.map((column) => column.header)), rule, ...rows.map(line)].join('\n');
}

/** 1234567 → "1,234,567". */
export function formatInteger(value: number): string {
  return Math.round(value).toLocaleString('en-US');
}
