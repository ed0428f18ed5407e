// A small SVG line chart: time on x, one line per series, a legend, and
// an aria-label that states what the chart shows.

const NS = 'http://www.w3.org/2000/svg';
export const COLORS = ['#1f77b4', '#d62728', '#2ca02c', '#9467bd', '#ff7f0e', '#17becf', '#8c564b', '#e377c2'];
const H = 200;
// The plot starts GAP past the y labels' column, so that the first point
// stands clear of its label.
const PAD = { l: 60, r: 14, t: 10, b: 26 };
const GAP = 10;

// chartWidth is the width of the drawing in its own units: the width it is
// shown at on a phone, so that its text is shown at its own size there,
// and 480 on larger screens.
function chartWidth() {
  return Math.round(Math.min(480, Math.max(260, window.innerWidth - 54)));
}

function svg(tag, attrs, text) {
  const el = document.createElementNS(NS, tag);
  for (const [k, v] of Object.entries(attrs)) el.setAttribute(k, String(v));
  if (text !== undefined) el.textContent = text;
  return el;
}

// yTicks are the values of the y axis's grid lines, from 0 to the top: at
// most five, a step of 1, 2 or 5 times a power of ten apart, so the labels
// are round numbers, and whole numbers for counts (integer), where a
// maximum of 1 has ticks 0 and 1, not 0, 0.5 and 1.
export function yTicks(max, integer) {
  if (!(max > 0)) return [0, 1];
  const raw = max / 4;
  const p = 10 ** Math.floor(Math.log10(raw));
  let step = [1, 2, 5, 10].map((m) => m * p).find((m) => m >= raw);
  if (integer) step = Math.max(1, Math.round(step));
  const ticks = [];
  for (let i = 0; i * step < max + step / 2 && ticks.length <= 5; i++) ticks.push(i * step);
  if (ticks[ticks.length - 1] < max) ticks.push(ticks.length * step);
  return ticks;
}

function timeLabel(t, span) {
  const d = new Date(t);
  if (span > 2 * 86400e3) return d.toLocaleDateString(undefined, { month: 'short', day: 'numeric' });
  return d.toLocaleTimeString(undefined, { hour: '2-digit', minute: '2-digit' });
}

// lineChart draws series [{name, points: [[timeMs, value]]}] over
// [from, to]. Points further apart than width are not joined: a gap means
// no data, not a straight line through it.
export function lineChart({ title, series, from, to, width, format, integer }) {
  const values = series.flatMap((s) => s.points.map((p) => p[1]));
  const ticks = yTicks(Math.max(0, ...values), integer);
  const top = ticks[ticks.length - 1];
  const W = chartWidth();
  const x = (t) => PAD.l + GAP + ((t - from) / (to - from)) * (W - PAD.l - GAP - PAD.r);
  const y = (v) => PAD.t + (1 - v / top) * (H - PAD.t - PAD.b);
  const label = values.length
    ? `${title}: ${series.length} line${series.length === 1 ? '' : 's'}, highest ${format(Math.max(...values))}`
    : `${title}: no data in this range`;
  const g = svg('svg', { viewBox: `0 0 ${W} ${H}`, role: 'img', 'aria-label': label });
  for (const v of ticks) {
    g.append(svg('line', { class: 'grid', x1: PAD.l, x2: W - PAD.r, y1: y(v), y2: y(v) }),
      svg('text', { x: PAD.l - 6, y: y(v) + 4, 'text-anchor': 'end' }, format(v)));
  }
  const n = W < 400 ? 2 : 4; // time labels that fit side by side, less one
  for (let i = 0; i <= n; i++) {
    const t = from + ((to - from) * i) / n;
    g.append(svg('text', { x: x(t), y: H - 8, 'text-anchor': i === 0 ? 'start' : i === n ? 'end' : 'middle' }, timeLabel(t, to - from)));
  }
  g.append(svg('line', { class: 'axis', x1: PAD.l, x2: W - PAD.r, y1: y(0), y2: y(0) }));
  series.forEach((s, i) => drawSeries(g, s, COLORS[i % COLORS.length], x, y, width));
  const fig = document.createElement('figure');
  fig.className = 'chart';
  const cap = document.createElement('figcaption');
  cap.textContent = title;
  fig.append(cap, g, legend(series));
  return fig;
}

function drawSeries(g, s, color, x, y, width) {
  let d = '';
  let prev = null;
  for (const [t, v] of s.points) {
    d += `${prev !== null && t - prev <= width ? 'L' : 'M'}${x(t).toFixed(1)},${y(v).toFixed(1)}`;
    prev = t;
  }
  g.append(svg('path', { d, fill: 'none', stroke: color, 'stroke-width': 2, 'stroke-linejoin': 'round' }));
  // Dots show values that have no neighbour to join, and points on hover.
  for (const [t, v] of s.points) {
    const dot = svg('circle', { cx: x(t).toFixed(1), cy: y(v).toFixed(1), r: 2.5, fill: color });
    dot.append(svg('title', {}, `${s.name}: ${v} at ${new Date(t).toLocaleString()}`));
    g.append(dot);
  }
}

function legend(series) {
  const ul = document.createElement('ul');
  ul.className = 'legend';
  series.forEach((s, i) => {
    const li = document.createElement('li');
    const sw = document.createElement('span');
    sw.className = 'swatch';
    sw.style.background = COLORS[i % COLORS.length];
    li.append(sw, s.name);
    ul.append(li);
  });
  return ul;
}
