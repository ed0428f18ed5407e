// Usage: requests, tokens and latency over time per key, model or
// endpoint, the range's totals per endpoint, and the raw request log with
// filters.
import { h, replace, field, values, table, copyButton, fmtNum, fmtMs, badge } from './dom.js';
import { api, APIError } from './api.js';
import { lineChart } from './chart.js';

const RANGES = [['1h', 'Last hour', 3600e3], ['6h', 'Last 6 hours', 6 * 3600e3], ['24h', 'Last 24 hours', 86400e3],
  ['7d', 'Last 7 days', 7 * 86400e3], ['30d', 'Last 30 days', 30 * 86400e3]];
const TOP = 8; // lines per chart; more would not be readable
// The APIs a usage row names, whatever the client's style (chat is also
// Anthropic's messages and Gemini's generateContent), come from the
// gateway (usage/endpoints). Rows written before it recorded them name
// none.
const endpointName = (e) => e || 'not recorded';

export async function usage(view, ctx) {
  const [{ keys }, { endpoints }] = await Promise.all([api('GET', 'keys'), api('GET', 'usage/endpoints')]);
  const keyOptions = [['', 'All keys'], ...keys.map((k) => [k.id, `${k.name} (${k.prefix}…)`])];
  const filters = h('form', { class: 'card inline', 'aria-label': 'Chart filters' },
    field({ name: 'range', label: 'Range', type: 'select', value: '24h', options: RANGES.map(([v, t]) => [v, t]) }),
    field({ name: 'by', label: 'One line per', type: 'select', value: 'key', options: [['key', 'key'], ['model', 'model'], ['endpoint', 'endpoint']] }),
    field({ name: 'key_id', label: 'Key', type: 'select', options: keyOptions }),
    field({ name: 'model', label: 'Model', placeholder: 'any' }));
  const charts = h('div', { class: 'charts', 'aria-live': 'polite' });
  const log = new UsageLog(keyOptions, endpoints);
  const breakdown = h('section', { 'aria-labelledby': 'by-endpoint', hidden: true });
  const redraw = () => drawUsage(charts, breakdown, values(filters), log, endpoints)
    .catch((e) => replace(charts, h('p', { class: 'err', role: 'alert' }, e.message)));
  filters.addEventListener('change', redraw);
  filters.addEventListener('submit', (ev) => { ev.preventDefault(); redraw(); });
  view.append(filters, charts,
    h('p', { class: 'muted' }, 'Where a line joins several keys, models or endpoints, p50 is their request-weighted mean and p99 the highest of their p99s.'),
    breakdown, h('h2', { id: 'raw-log' }, 'Request log'), log.render());
  await Promise.all([redraw(), log.load(false)]);
}

function rangeQuery(v) {
  const span = RANGES.find((r) => r[0] === v.range)[2];
  const to = new Date();
  const q = new URLSearchParams({ from: new Date(to - span).toISOString(), to: to.toISOString() });
  if (v.key_id) q.set('key_id', v.key_id);
  if (v.model) q.set('model', v.model.trim());
  return q;
}

// drawUsage fetches the range's buckets, split by endpoint, once for both
// the charts and the breakdown by endpoint.
async function drawUsage(charts, breakdown, v, log, endpoints) {
  const q = rangeQuery(v);
  const latency = api('GET', `usage/latency?${q}`);
  q.set('group', 'endpoint');
  const [data, lat] = await Promise.all([api('GET', `usage/buckets?${q}`), latency]);
  breakdown.hidden = !data.buckets.length;
  replace(breakdown, h('h2', { id: 'by-endpoint' }, 'By endpoint'),
    endpointTable(data.buckets, lat, RANGES.find((r) => r[0] === v.range)[1], endpoints, (e) => log.show(e)),
    lat.ranked ? '' : h('p', { class: 'muted' }, `No latency: this range holds more than ${fmtNum(lat.max_rows)} requests, more than the console ranks. Pick a shorter range, a key or a model.`));
  drawCharts(charts, data, v);
}

function drawCharts(box, data, v) {
  if (!data.buckets.length) {
    replace(box, h('p', { class: 'empty-state card' }, 'No requests in this range yet. Charts appear once a key is used: try one in the ',
      h('a', { href: '#/playground' }, 'Playground'), '.'));
    return;
  }
  const from = Date.parse(data.from);
  const to = Date.parse(data.to);
  const width = data.width_ms;
  const names = {
    model: (b) => b.model,
    endpoint: (b) => endpointName(b.endpoint),
    key: (b) => data.keys[b.key_id] || (b.key_id === 0 ? 'keys of the config file' : `key #${b.key_id}`),
  };
  const name = names[v.by];
  const groups = group(data.buckets, name);
  const slots = [];
  for (let t = Math.floor(from / width) * width; t < to; t += width) slots.push(t);
  // The first slot starts at or before from: the axis starts there, so
  // that no point falls left of it.
  const metric = (title, fn, fill, format, integer) => lineChart({
    title, from: slots[0], to, width, format, integer,
    series: groups.map(([n, byStart]) => ({ name: n, points: points(byStart, slots, fn, fill) })),
  });
  const count = (n) => fmtNum(Math.round(n));
  const latency = (v) => (v ? fmtMs(v) : '0');
  replace(box,
    metric('Requests', (bs) => sum(bs, (b) => b.requests), true, count, true),
    metric('Tokens (input + output)', (bs) => sum(bs, (b) => b.input_tokens + b.output_tokens), true, count, true),
    metric('Latency p50', (bs) => sum(bs, (b) => b.p50_ms * b.requests) / Math.max(1, sum(bs, (b) => b.requests)), false, latency),
    metric('Latency p99', (bs) => Math.max(...bs.map((b) => b.p99_ms)), false, latency));
}

// group sorts buckets into lines: [[name, Map(startMs → buckets)]], the
// busiest TOP lines first.
function group(buckets, name) {
  const lines = new Map();
  for (const b of buckets) {
    const n = name(b);
    if (!lines.has(n)) lines.set(n, { total: 0, byStart: new Map() });
    const line = lines.get(n);
    const t = Date.parse(b.start);
    line.total += b.requests;
    if (!line.byStart.has(t)) line.byStart.set(t, []);
    line.byStart.get(t).push(b);
  }
  return [...lines.entries()].sort((a, b) => b[1].total - a[1].total).slice(0, TOP).map(([n, l]) => [n, l.byStart]);
}

// points evaluates fn on each time slot's buckets. Counts fill empty
// slots with 0; latencies leave them out (no request, no latency).
function points(byStart, slots, fn, fill) {
  const out = [];
  for (const t of slots) {
    const bs = byStart.get(t);
    if (bs) out.push([t, fn(bs)]);
    else if (fill) out.push([t, 0]);
  }
  // Buckets not on a slot (another alignment) are still shown.
  for (const [t, bs] of byStart) if (!slots.includes(t)) out.push([t, fn(bs)]);
  return out.sort((a, b) => a[0] - b[0]);
}

function sum(bs, f) {
  return bs.reduce((n, b) => n + f(b), 0);
}

// byEndpoint totals buckets per endpoint, the busiest first; units are
// summed per unit (an endpoint has one, or none).
function byEndpoint(buckets) {
  const totals = new Map();
  for (const b of buckets) {
    const e = b.endpoint || '';
    if (!totals.has(e)) totals.set(e, { endpoint: e, requests: 0, errors: 0, input: 0, output: 0, units: new Map() });
    const t = totals.get(e);
    t.requests += b.requests;
    t.errors += b.errors;
    t.input += b.input_tokens;
    t.output += b.output_tokens;
    if (b.unit) t.units.set(b.unit, (t.units.get(b.unit) || 0) + b.units);
  }
  return [...totals.values()].sort((a, b) => b.requests - a.requests || a.endpoint.localeCompare(b.endpoint));
}

// fmtUnits is a count in its unit, as words: "1 image", "2,048 characters".
function fmtUnits(n, unit) {
  const words = unit.replaceAll('_', ' ');
  return `${fmtNum(n)} ${n === 1 ? words.replace(/s$/, '') : words}`;
}

// endpointTable is the breakdown by endpoint, with each endpoint's median
// and p95 latency over the range (lat, ranked from its requests by the
// store); show(endpoint) narrows the request log to one of the endpoints
// it filters by.
function endpointTable(buckets, lat, rangeLabel, endpoints, show) {
  const rows = byEndpoint(buckets);
  const latency = new Map(lat.endpoints.map((l) => [l.endpoint, l]));
  const ms = (e, p) => (latency.has(e) ? fmtMs(latency.get(e)[p]) : '—');
  return table(`Requests by endpoint, ${rangeLabel.toLowerCase()}`,
    ['Endpoint', 'Requests', 'Errors', 'Median', 'p95', 'Input tokens', 'Output tokens', 'Other units', 'Log'],
    rows.map((t) => [endpointName(t.endpoint), fmtNum(t.requests),
      t.errors ? badge(fmtNum(t.errors), 'bad') : '0', ms(t.endpoint, 'p50_ms'), ms(t.endpoint, 'p95_ms'),
      fmtNum(t.input), fmtNum(t.output),
      [...t.units].map(([u, n]) => fmtUnits(n, u)).join(', ') || '—',
      endpoints.includes(t.endpoint)
        ? h('button', { type: 'button', 'aria-label': `Show the requests to ${t.endpoint} in the log`, onclick: () => show(t.endpoint) }, 'Show')
        : '—']));
}

// UsageLog is the raw log table, newest first, with filters and paging.
class UsageLog {
  constructor(keyOptions, endpoints) {
    this.rows = [];
    this.filters = h('form', { class: 'card inline', 'aria-label': 'Request log filters' },
      field({ name: 'key_id', label: 'Key', type: 'select', options: keyOptions }),
      field({ name: 'model', label: 'Model', placeholder: 'any' }),
      field({ name: 'endpoint', label: 'Endpoint', type: 'select', options: [['', 'any'], ...endpoints.map((e) => [e, e])] }),
      field({ name: 'channel', label: 'Channel', placeholder: 'any' }),
      field({ name: 'status', label: 'Status', type: 'number', placeholder: 'any', min: 100 }),
      h('div', { class: 'actions' }, h('button', { type: 'submit', class: 'primary' }, 'Filter')));
    this.error = h('p', { class: 'err', role: 'alert', hidden: true });
    this.box = h('div', { 'aria-live': 'polite' });
    this.more = h('button', { type: 'button', hidden: true, onclick: () => this.load(true) }, 'Load older requests');
    this.filters.addEventListener('submit', (ev) => { ev.preventDefault(); this.load(false); });
  }

  render() {
    return h('section', { 'aria-labelledby': 'raw-log' }, this.filters, this.error, this.box, this.more);
  }

  // show narrows the log to one endpoint and brings it into view.
  async show(endpoint) {
    this.filters.elements.namedItem('endpoint').value = endpoint;
    await this.load(false);
    document.getElementById('raw-log').scrollIntoView({ block: 'start' });
  }

  async load(older) {
    const v = values(this.filters);
    const q = new URLSearchParams({ limit: '50' });
    for (const k of ['key_id', 'model', 'endpoint', 'channel', 'status']) if (v[k].trim()) q.set(k, v[k].trim());
    if (older && this.rows.length) q.set('before_id', this.rows[this.rows.length - 1].id);
    this.error.hidden = true;
    let rows;
    try {
      ({ rows } = await api('GET', `usage?${q}`));
    } catch (e) {
      this.error.textContent = e instanceof APIError && e.field ? `${e.field}: ${e.message}` : e.message;
      this.error.hidden = false;
      return;
    }
    this.rows = older ? [...this.rows, ...rows] : rows;
    this.more.hidden = rows.length < 50;
    replace(this.box, table(`${this.rows.length} request${this.rows.length === 1 ? '' : 's'}, newest first`,
      ['Time', 'Key', 'Model', 'Endpoint', 'Channel', 'Status', 'Input', 'Output', 'Latency', 'First token', 'Request'],
      this.rows.map((r) => [h('span', { class: 'nowrap' }, logTime(r.time)), r.key || (r.key_id ? `#${r.key_id}` : 'config'), r.model,
        // The client's style under the endpoint: one column fewer, so
        // that the log fits a laptop's screen. One element, so that a
        // phone's card keeps both right of the column's name.
        h('div', {}, h('span', { class: 'endpoint' }, endpointName(r.endpoint)), h('span', { class: 'state-detail' }, `${r.style} style`)),
        r.channel || '—',
        badge(String(r.status), r.status < 400 ? 'ok' : 'bad'), fmtNum(r.input_tokens), fmtNum(r.output_tokens),
        fmtMs(r.latency_ms), fmtMs(r.first_token_ms), detailsButton(r)]),
      (i) => rowDetail(this.rows[i]), { collapsed: true }));
  }
}

// logTime is a row's time, short enough to stay on one line: the date as
// month and day, the time to the second.
function logTime(t) {
  return new Date(t).toLocaleString(undefined, { month: 'short', day: 'numeric', hour: '2-digit', minute: '2-digit', second: '2-digit' });
}

// detailsButton opens and closes the detail row that follows its row.
function detailsButton(r) {
  const b = h('button', { type: 'button', 'aria-expanded': 'false', 'aria-label': `Details of request ${r.request_id}` }, 'Details');
  b.addEventListener('click', () => {
    const detail = b.closest('tr').nextElementSibling;
    detail.hidden = !detail.hidden;
    b.setAttribute('aria-expanded', String(!detail.hidden));
  });
  return b;
}

// rowDetail tells what became of a request: its id, and each channel tried
// with its outcome and how long it took. The rows of the requests that had
// a failed attempt keep their attempts; of the others the row says it all.
function rowDetail(r) {
  let attempts;
  if (r.attempts) {
    attempts = h('ol', { class: 'attempts' }, r.attempts.map((a) => h('li', {}, h('strong', {}, a.channel),
      a.error ? ` failed with ${a.status}: ${a.error} (after ${fmtMs(a.duration_ms)})` : ` answered (${a.status}) in ${fmtMs(a.duration_ms)}`)));
  } else if (!r.channel) {
    attempts = h('p', {}, 'No channel was tried: the gateway answered itself (the key, its limits or the model refused the request, or no channel was available).');
  } else if (r.status < 400) {
    attempts = h('p', {}, h('strong', {}, r.channel), ` answered at the first attempt (${r.status}).`);
  } else {
    attempts = h('p', {}, `The last attempt went to ${r.channel}. Its cause was not recorded: the request is older than the gateway's record of attempts.`);
  }
  return h('div', { class: 'row-detail' },
    h('p', { class: 'endpoint' }, 'Endpoint ', h('strong', {}, endpointName(r.endpoint)), `, called in the ${r.style} style`,
      r.unit ? `; ${fmtUnits(r.units, r.unit)}` : '', '.'),
    h('p', {}, 'Request id ', h('code', { class: 'request-id' }, r.request_id), ' ', copyButton(() => r.request_id, `Copy the request id ${r.request_id}`)),
    attempts);
}
