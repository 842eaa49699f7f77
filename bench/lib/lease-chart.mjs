/*
 * The lease dial as an SVG (no dependencies): left, the measured cost of a decision against lease
 * size, with the direct Redis call as a reference line; right, the worst-case error of a fleet
 * against lease size for a few limits, with the sizing rule's 25 % line. Both axes logarithmic,
 * so each 10× step of the dial is one step to the right and the cliff shows as a bend.
 */

const WIDTH = 960;
const HEIGHT = 420;
const PANEL = { width: 360, height: 300, top: 60 };
const LEFTS = [90, 570];
const COLORS = ['#1f77b4', '#d62728', '#2ca02c', '#9467bd'];

const log10 = Math.log10;
const xml = (text) => String(text).replace(/&/g, '&amp;').replace(/</g, '&lt;');

/**
 * @param {number} left
 * @param {{ title: string, xLabel: string, yLabel: string, xTicks: number[], yTicks: number[], series: { label: string, points: number[][] }[], references?: { value: number, label: string }[] }} options
 */
function panel(left, { title, xLabel, yLabel, xTicks, yTicks, series, references = [] }) {
  const [x0, x1] = [log10(xTicks[0]), log10(xTicks[xTicks.length - 1])];
  const [y0, y1] = [log10(yTicks[0]), log10(yTicks[yTicks.length - 1])];
  const round = (n) => Math.round(n * 10) / 10;
  const x = (v) => round(left + ((log10(v) - x0) / (x1 - x0)) * PANEL.width);
  const y = (v) => round(PANEL.top + PANEL.height - ((log10(v) - y0) / (y1 - y0)) * PANEL.height);
  const bottom = PANEL.top + PANEL.height;
  const out = [
    `<text x="${left + PANEL.width / 2}" y="${PANEL.top - 28}" text-anchor="middle" font-weight="bold">${xml(title)}</text>`,
    `<rect x="${left}" y="${PANEL.top}" width="${PANEL.width}" height="${PANEL.height}" fill="none" stroke="#999"/>`,
  ];
  for (const t of xTicks) {
    out.push(`<line x1="${x(t)}" y1="${PANEL.top}" x2="${x(t)}" y2="${bottom}" stroke="#eee"/>`);
    out.push(`<text x="${x(t)}" y="${bottom + 16}" text-anchor="middle">${t}</text>`);
  }
  for (const t of yTicks) {
    out.push(`<line x1="${left}" y1="${y(t)}" x2="${left + PANEL.width}" y2="${y(t)}" stroke="#eee"/>`);
    out.push(`<text x="${left - 6}" y="${y(t) + 4}" text-anchor="end">${t.toLocaleString('en-US')}</text>`);
  }
  out.push(`<text x="${left + PANEL.width / 2}" y="${bottom + 36}" text-anchor="middle">${xml(xLabel)}</text>`);
  out.push(
    `<text transform="translate(${left - 74} ${PANEL.top + PANEL.height / 2}) rotate(-90)" text-anchor="middle">${xml(yLabel)}</text>`,
  );
  for (const { value, label } of references) {
    out.push(
      `<line x1="${left}" y1="${y(value)}" x2="${left + PANEL.width}" y2="${y(value)}" stroke="#555" stroke-dasharray="6 4"/>`,
    );
    out.push(
      `<text x="${left + PANEL.width - 4}" y="${y(value) - 5}" text-anchor="end" fill="#555">${xml(label)}</text>`,
    );
  }
  series.forEach(({ label, points }, i) => {
    const color = COLORS[i % COLORS.length];
    const path = points.map(([px, py], j) => `${j === 0 ? 'M' : 'L'}${x(px)},${y(py)}`).join(' ');
    out.push(`<path d="${path}" fill="none" stroke="${color}" stroke-width="2"/>`);
    for (const [px, py] of points) out.push(`<circle cx="${x(px)}" cy="${y(py)}" r="3.5" fill="${color}"/>`);
    out.push(`<text x="${left + 8}" y="${PANEL.top + 16 + 16 * i}" fill="${color}">${xml(label)}</text>`);
  });
  return out.join('\n');
}

/** Decade ticks covering [min, max]. */
function decades(min, max) {
  const ticks = [];
  for (let t = 10 ** Math.floor(log10(min)); t <= 10 ** Math.ceil(log10(max)); t *= 10) ticks.push(t);
  return ticks;
}

/**
 * @param {{ leaseSizes: number[], nsPerOp: number[], directNs: number, instances: number,
 *   limits: number[], caption: string }} data
 */
export function leaseDialSvg({ leaseSizes, nsPerOp, directNs, instances, limits, caption }) {
  const errorPercent = (limit) =>
    leaseSizes.map((size) => [size, Math.max(0.1, (100 * instances * (size - 1)) / limit)]);
  const latency = panel(LEFTS[0], {
    title: 'Cost of a decision (measured)',
    xLabel: 'lease size',
    yLabel: 'ns per decision',
    xTicks: decades(leaseSizes[0], leaseSizes.at(-1)),
    yTicks: decades(Math.min(...nsPerOp), Math.max(directNs, ...nsPerOp)),
    series: [{ label: 'leased limit() over Redis', points: leaseSizes.map((size, i) => [size, nsPerOp[i]]) }],
    references: [{ value: directNs, label: 'direct Redis call' }],
  });
  const error = panel(LEFTS[1], {
    title: `Worst-case error, ${instances} instances`,
    xLabel: 'lease size',
    yLabel: `% of the limit: ${instances} × (lease − 1) / limit`,
    xTicks: decades(leaseSizes[0], leaseSizes.at(-1)),
    yTicks: [0.1, 1, 10, 100, 1000, 10000],
    series: limits.map((limit) => ({ label: `limit ${limit.toLocaleString('en-US')}`, points: errorPercent(limit) })),
    references: [{ value: 25, label: 'sizing rule: 25 %' }],
  });
  return `<svg xmlns="http://www.w3.org/2000/svg" width="${WIDTH}" height="${HEIGHT}" viewBox="0 0 ${WIDTH} ${HEIGHT}" font-family="sans-serif" font-size="12">
<rect width="100%" height="100%" fill="white"/>
${latency}
${error}
<text x="${WIDTH / 2}" y="${HEIGHT - 8}" text-anchor="middle" fill="#555">${xml(caption)}</text>
</svg>
`;
}
