// Channels (admins): every upstream with its health; console channels can
// be added, edited, disabled and deleted here, any channel tested.
import { h, replace, form, table, confirmButton, announce, fmtNum, fmtMs, list, badge } from './dom.js';
import { api, APIError } from './api.js';
import { stateBadge } from './models.js';

const TIMEOUTS = [['connect', 'Connect timeout'], ['first_byte', 'First byte timeout'], ['idle', 'Idle timeout'], ['total', 'Total timeout']];

export async function channels(view) {
  // types are the channel types the gateway takes, as the list reports
  // them: the console keeps no list of its own.
  const page = { listBox: h('div'), editBox: h('div'), types: [] };
  page.refresh = async () => {
    const { channels: all, types } = await api('GET', 'channels');
    page.types = types || [];
    replace(page.listBox, channelTable(all, page));
  };
  await page.refresh();
  const add = channelForm({ type: page.types[0], weight: 1, enabled: true }, page.types, false, async (body, f) => {
    await api('POST', 'channels', body);
    f.reset();
    announce(`Channel ${body.name} added`);
    await page.refresh();
  });
  view.append(page.listBox, page.editBox,
    h('section', { class: 'card', 'aria-labelledby': 'add-channel' },
      h('h2', { id: 'add-channel' }, 'Add a channel'),
      h('p', { class: 'muted' }, 'Channels of the configuration file are edited there; channels added here are kept in the store, their upstream keys encrypted.'),
      add));
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
    c.name, c.type, c.source,
    c.keys_error ? h('span', { title: c.keys_error }, badge('keys unreadable: edit and enter them again', 'bad')) : stateBadge(c.state),
    fmtNum(c.requests), `${(c.error_rate * 100).toFixed(1)} %`,
    c.editable ? `${c.priority} / ${c.weight}` : '—',
    h('span', { class: 'mono' }, (c.models || []).join(', ') || '—'),
    h('div', { class: 'actions' }, channelActions(c, page)),
  ]);
  return table(`${all.length} channel${all.length === 1 ? '' : 's'}`,
    ['Name', 'Type', 'Source', 'State', 'Requests', 'Error rate', 'Priority / weight', 'Models', 'Actions'], rows);
}

function channelActions(c, page) {
  const result = h('span', { role: 'status' });
  const test = h('button', { type: 'button', 'aria-label': `Test channel ${c.name}` }, 'Test');
  test.addEventListener('click', async () => {
    test.disabled = true;
    replace(result, 'testing…');
    try {
      const r = await api('POST', `channels/${encodeURIComponent(c.name)}/test`);
      replace(result, r.ok ? badge(`ok in ${fmtMs(r.latency_ms)}`, 'ok') : badge(`failed: ${r.error}`, 'bad'));
    } catch (e) {
      replace(result, badge(e.message, 'bad'));
    } finally {
      test.disabled = false;
    }
  });
  if (!c.editable) return [test, result];
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
    }, `Delete channel ${c.name}`),
    result];
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
