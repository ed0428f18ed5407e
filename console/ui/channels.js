// Channels (admins): every upstream with its health; console channels can
// be added, edited, disabled and deleted here, any channel tested.
import { h, replace, form, table, confirmButton, announce, fmtNum, fmtMs, fmtTime, list, badge } from './dom.js';
import { api, APIError } from './api.js';
import { stateBadge } from './models.js';
import { limitsLines } from './limits.js';

const TIMEOUTS = [['connect', 'Connect timeout'], ['first_byte', 'First byte timeout'], ['idle', 'Idle timeout'], ['total', 'Total timeout']];

export async function channels(view) {
  // types are the channel types the gateway takes, as the list reports
  // them: the console keeps no list of its own. tested holds the last
  // test's result by channel name, shown in the row's detail.
  const page = { listBox: h('div'), editBox: h('div'), fleetBox: h('div'), types: [], tested: {} };
  page.refresh = async () => {
    const { channels: all, types, fleet } = await api('GET', 'channels');
    page.types = types || [];
    replace(page.listBox, channelTable(all, page));
    replace(page.fleetBox, ...(fleet && fleet.length ? [fleetCard(fleet)] : []));
  };
  await page.refresh();
  const add = channelForm({ type: page.types[0], weight: 1, enabled: true }, page.types, false, async (body, f) => {
    await api('POST', 'channels', body);
    f.reset();
    announce(`Channel ${body.name} added`);
    await page.refresh();
  });
  view.append(page.listBox, page.editBox, page.fleetBox,
    h('section', { class: 'card', 'aria-labelledby': 'add-channel' },
      h('h2', { id: 'add-channel' }, 'Add a channel'),
      h('p', { class: 'muted intro' }, 'Channels of the configuration file are edited there; channels added here are kept in the store, their upstream keys encrypted.'),
      add));
}

// fleetCard shows the nodes of the cluster (a gateway in one lists them):
// each with its version, the streams it relays now, and how long ago its
// last rate-limit count arrived here.
function fleetCard(fleet) {
  const rows = fleet.map((n) => [
    n.self ? h('span', {}, n.name, ' ', badge('this node', 'ok')) : n.name,
    n.addr, n.version || '—', fmtNum(n.open_streams),
    n.self ? '—' : n.counts_age < 0 ? 'none lately' : `${Math.round(n.counts_age / 1e6)}\u00a0ms ago`,
  ]);
  return h('section', { class: 'card', 'aria-labelledby': 'fleet' },
    h('h2', { id: 'fleet' }, 'Fleet'),
    h('p', { class: 'muted intro' }, 'The gateways that share their rate limits and caches by gossip with this one.'),
    table(`${fleet.length} node${fleet.length === 1 ? '' : 's'}`,
      ['Node', 'Gossip address', 'Version', 'Open streams', 'Last counts heard'], rows));
}

// channelForm edits c, offering the channel types in types (and c's own,
// should the gateway no longer take it, so the form shows what is stored).
function channelForm(c, types, editing, save) {
  const offered = c.type && !types.includes(c.type) ? [c.type, ...types] : types;
  const fields = [
    { name: 'name', label: 'Name', value: c.name, required: true },
    { name: 'type', label: 'Type', type: 'select', value: c.type, options: offered.map((t) => [t, t]) },
    { name: 'base_url', label: 'Base URL', value: c.base_url, placeholder: 'https://api.openai.com/v1', help: 'As the provider’s own SDK spells it. Not needed for demo.' },
    { name: 'api_keys', label: 'Upstream API keys', type: 'textarea', rows: 2,
      help: editing ? `One per line. Leave empty to keep the ${(c.api_keys || []).length} current key(s).` : 'One per line; rotated.' },
    { name: 'models', label: 'Models', value: (c.models || []).join(', '), help: 'Upstream model names served, comma-separated.' },
    { name: 'model_map', label: 'Model map', type: 'textarea', rows: 2, value: Object.entries(c.model_map || {}).map(([k, v]) => `${k}=${v}`).join('\n'), help: 'Optional, one per line: public-name=upstream-name.' },
    { name: 'priority', label: 'Priority', type: 'number', min: 0, value: c.priority || 0, help: 'Lower is tried first.' },
    { name: 'weight', label: 'Weight', type: 'number', min: 1, value: c.weight || 1, help: 'Share of traffic within a priority.' },
    { name: 'api_version', label: 'API version', value: c.api_version, help: 'Anthropic channels: the anthropic-version sent upstream.' },
    { name: 'rpm', label: 'Requests per minute', type: 'number', min: 0, value: c.rpm || 0, help: 'The provider’s quota, for the whole fleet; 0 = unlimited. A channel at its limit is passed over, not failed.' },
    { name: 'tpm', label: 'Tokens per minute', type: 'number', min: 0, value: c.tpm || 0, help: 'The same for tokens; 0 = unlimited.' },
    ...TIMEOUTS.map(([k, label]) => ({ name: `timeouts.${k}`, label, value: c.timeouts?.[k], placeholder: 'default', help: 'A duration such as 30s; empty = default.' })),
    { name: 'enabled', label: 'Enabled', type: 'checkbox', value: c.enabled },
  ];
  return form({
    label: editing ? `Edit channel ${c.name}` : 'Add a channel',
    submit: editing ? 'Save channel' : 'Add channel',
    grid: true,
    fields,
    onSubmit: (v, f) => save(channelBody(v, editing), f),
  });
}

// channelBody turns the form's strings into the API's types.
function channelBody(v, editing) {
  const body = {
    name: v.name.trim(), type: v.type, base_url: v.base_url.trim(), models: list(v.models),
    model_map: parseMap(v.model_map), priority: Number(v.priority || 0), weight: Number(v.weight || 1),
    rpm: Number(v.rpm || 0), tpm: Number(v.tpm || 0),
    api_version: v.api_version.trim(), enabled: v.enabled, timeouts: {},
  };
  for (const [k] of TIMEOUTS) body.timeouts[k] = v[`timeouts.${k}`].trim();
  const keys = v.api_keys.split('\n').map((s) => s.trim()).filter(Boolean);
  if (!editing || keys.length) body.api_keys = keys;
  return body;
}

function parseMap(text) {
  const map = {};
  for (const line of text.split('\n').map((s) => s.trim()).filter(Boolean)) {
    const i = line.indexOf('=');
    if (i <= 0 || i === line.length - 1) throw new APIError(400, `"${line}" is not public-name=upstream-name`, 'model_map');
    map[line.slice(0, i).trim()] = line.slice(i + 1).trim();
  }
  return map;
}

function channelTable(all, page) {
  const rows = all.map((c) => [
    h('span', { class: 'nowrap' }, c.name), h('span', { class: 'nowrap' }, c.type, h('span', { class: 'muted' }, ` · ${c.source}`)),
    c.keys_error ? h('span', { title: c.keys_error }, badge('keys unreadable: edit and enter them again', 'bad')) : stateBadge(c),
    fmtNum(c.requests), `${(c.error_rate * 100).toFixed(1)}\u00a0%`,
    [c.editable ? `${c.priority} / ${c.weight}` : '—', h('span', { class: 'muted' }, limitsLines(c.rpm, c.tpm))],
    names(c.models),
    h('div', { class: 'actions' }, channelActions(c, page)),
  ]);
  return table(`${all.length} channel${all.length === 1 ? '' : 's'}`,
    ['Name', 'Type · source', 'State', 'Requests', 'Error rate', 'Priority / weight, limits', 'Models', 'Actions'], rows,
    (i) => channelDetail(all[i], page.tested[all[i].name]));
}

// names lists model names, each kept on one line: a name breaks at no
// hyphen, the list between names.
function names(list) {
  if (!list || !list.length) return '—';
  return h('span', { class: 'mono' }, list.flatMap((n, i) => [i ? ', ' : '', h('span', { class: 'nowrap' }, n)]));
}

// channelDetail is the line under a channel's row: its last test's result
// and its last error, each with its time, in words. Long texts wrap there,
// across the table, not in a narrow cell.
function channelDetail(c, test) {
  const lines = [];
  if (test) {
    lines.push(h('p', { class: test.ok ? 'test-result ok' : 'test-result bad', 'data-channel': c.name },
      `Test at ${test.at.toLocaleTimeString()}: `, test.ok ? `answered in ${fmtMs(test.latency_ms)}` : `failed: ${test.error}`));
  }
  if (c.last_error) {
    lines.push(h('p', { class: 'last-error', 'data-channel': c.name },
      `Last error, ${fmtTime(c.last_error_at)}: ${c.last_error}`));
  }
  return lines.length ? lines : null;
}

function channelActions(c, page) {
  const test = h('button', { type: 'button', 'aria-label': `Test channel ${c.name}` }, 'Test');
  test.addEventListener('click', async () => {
    test.disabled = true;
    test.textContent = 'Testing…';
    try {
      const r = await api('POST', `channels/${encodeURIComponent(c.name)}/test`);
      page.tested[c.name] = { ...r, at: new Date() };
      announce(r.ok ? `Channel ${c.name} answered in ${fmtMs(r.latency_ms)}` : `Channel ${c.name} failed its test`);
      await page.refresh(); // the test counts as a request: new counts and state
    } catch (e) {
      announce(e.message);
      test.disabled = false;
      test.textContent = 'Test';
    }
  });
  if (!c.editable) return [test];
  const path = `channels/${encodeURIComponent(c.name)}`;
  const change = async (body, done) => {
    await api('PATCH', path, body);
    announce(done);
    await page.refresh();
  };
  return [test,
    h('button', { type: 'button', 'aria-label': `Edit channel ${c.name}`, onclick: () => editChannel(c, page) }, 'Edit'),
    h('button', { type: 'button', 'aria-label': `${c.enabled ? 'Disable' : 'Enable'} channel ${c.name}`,
      onclick: () => change({ enabled: !c.enabled }, `Channel ${c.name} ${c.enabled ? 'disabled' : 'enabled'}`).catch((e) => announce(e.message)) },
    c.enabled ? 'Disable' : 'Enable'),
    confirmButton('Delete', 'Confirm delete', async () => {
      await api('DELETE', path);
      announce(`Channel ${c.name} deleted`);
      await page.refresh();
    }, `Delete channel ${c.name}`)];
}

function editChannel(c, page) {
  const f = channelForm(c, page.types, true, async (body) => {
    await api('PATCH', `channels/${encodeURIComponent(c.name)}`, body);
    replace(page.editBox);
    announce(`Channel ${body.name} saved`);
    await page.refresh();
  });
  f.querySelector('.actions').append(h('button', { type: 'button', onclick: () => replace(page.editBox) }, 'Cancel'));
  replace(page.editBox, h('section', { class: 'card', 'aria-label': `Edit channel ${c.name}` }, h('h2', {}, `Edit channel “${c.name}”`), f));
  f.elements.namedItem('name').focus();
}
