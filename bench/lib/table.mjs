/** @typedef {{ readonly header: string, readonly align?: string }} Column A column of a {@link formatTable} table; `align: 'right'` for numbers (default left). */

/**
 * A Markdown table padded so it also reads well in a terminal.
 * @param {readonly Column[]} columns
 * @param {readonly (readonly string[])[]} rows
 * @returns {string}
 */
export function formatTable(columns, rows) {
  const widths = columns.map((column, i) =>
    Math.max(column.header.length, 3, ...rows.map((row) => (row[i] ?? '').length)),
  );
  /** @param {readonly string[]} cells */
  const line = (cells) =>
    `| ${columns
      .map((column, i) => {
        const cell = cells[i] ?? '';
        const width = /** @type {number} */ (widths[i]);
        return column.align === 'right' ? cell.padStart(width) : cell.padEnd(width);
      })
      .join(' | ')} |`;
  const rule = `|${columns
    .map((column, i) => {
      const dashes = '-'.repeat(/** @type {number} */ (widths[i]) + 1);
      return column.align === 'right' ? `${dashes}:` : `${dashes}-`;
    })
    .join('|')}|`;
  return [line(columns.map((column) => column.header)), rule, ...rows.map(line)].join('\n');
}

/**
 * 1234567 → "1,234,567".
 * @param {number} value
 * @returns {string}
 */
export function formatInteger(value) {
  return Math.round(value).toLocaleString('en-US');
}
