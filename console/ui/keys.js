// Keys: create (the secret is shown once), list with spend, edit, revoke,
// delete.
import { h, replace, form, table, copyButton, confirmButton, announce, fmtTime, fmtNum, fmtUnits, list, badge, uid } from './dom.js';
import { api } from './api.js';
import { modelLimitsEditor, keyLimitsLines, normalLimits } from './limits.js';

const KEY_POLL_MS = 2000;

export async function keys(view, ctx) {
  const listBox = h('div');
  const secretBox = h('div');
  const editBox = h('div');
  const page = { ctx, listBox, editBox, refresh: null };
  let shown = '';
  const show = (all) => {
    shown = JSON.stringify(all);
    replace(listBox, keyTable(all, page));
  };
  page.refresh = async () => show((await api('GET', 'keys')).keys);
  // Use counts and last-use times change while the page is open (the
  // gateway writes usage within a second or so): poll while it is shown,
  // redrawing only on a change and never under a pending confirmation.
  const poll = setInterval(async () => {
    if (!view.isConnected) { clearInterval(poll); return; }
    if (document.hidden || listBox.querySelector('[data-armed]')) return;
    try {
      const { keys: all } = await api('GET', 'keys');
      if (JSON.stringify(all) !== shown && view.isConnected && !listBox.querySelector('[data-armed]')) show(all);
    } catch { /* the next poll tries again; a lost session logs out on its own */ }
  }, KEY_POLL_MS);
  const limits = modelLimitsEditor({});
  const create = form({
    label: 'Create a key',
    submit: 'Create key',
    grid: true,
    fields: keyFields({ models: ['*'] }),
    extra: limits.box,
    onSubmit: async (v, f) => {
      const k = await api('POST', 'keys', { ...keyBody(v), model_limits: limits.value() }).catch((e) => { throw limits.fieldError(e); });
      f.reset();
      limits.reset();
      showSecret(secretBox, k);
      await page.refresh();
    },
  });
  view.append(
    h('section', { class: 'card', 'aria-labelledby': 'new-key' }, h('h2', { id: 'new-key' }, 'Create a key'), create),
    secretBox, editBox,
    h('section', { 'aria-labelledby': 'key-list' }, h('h2', { id: 'key-list' }, ctx.admin ? 'All keys' : 'Your keys'), listBox));
  await page.refresh();
}

function keyFields(k) {
  return [
    { name: 'name', label: 'Name', value: k.name, required: true, help: 'What the key is for, e.g. "billing service".' },
    { name: 'models', label: 'Models', value: (k.models || []).join(', '), help: 'Allowed models, comma-separated: exact names, prefixes ending in *, or * for all.' },
    { name: 'rpm', label: 'Requests per minute', type: 'number', min: 0, value: k.rpm || 0, help: '0 = unlimited.' },
    { name: 'tpm', label: 'Tokens per minute', type: 'number', min: 0, value: k.tpm || 0, help: '0 = unlimited.' },
    { name: 'expires', label: 'Expires', type: 'datetime-local', value: localInput(k.expires), help: 'Empty = never.' },
  ];
}

// keyBody turns the form's strings into the API's types.
function keyBody(v) {
  return {
    name: v.name,
    models: list(v.models),
    rpm: Number(v.rpm || 0),
    tpm: Number(v.tpm || 0),
    expires: v.expires ? new Date(v.expires).toISOString() : '',
  };
}

// localInput is an RFC 3339 time as a datetime-local control's value.
function localInput(t) {
  if (!t) return '';
  const d = new Date(t);
  const pad = (n) => String(n).padStart(2, '0');
  return `${d.getFullYear()}-${pad(d.getMonth() + 1)}-${pad(d.getDate())}T${pad(d.getHours())}:${pad(d.getMinutes())}`;
}

function showSecret(box, k) {
  const id = uid('secret');
  replace(box, h('section', { class: 'card secret', role: 'alert', 'aria-labelledby': `${id}-h` },
    h('h2', { id: `${id}-h` }, `Key “${k.name}” created`),
    h('p', {}, 'Copy the key now: this is the only time it is shown. Rosetta keeps only a hash of it.'),
    h('div', { class: 'url-row' },
      h('label', { class: 'label', for: id }, 'Secret key'),
      h('input', { id, readonly: true, value: k.secret, 'data-secret': '' }),
      copyButton(() => k.secret, 'Copy the new key')),
    h('div', { class: 'actions' },
      h('button', { type: 'button', onclick: () => replace(box) }, 'Done, I have saved it'))));
  box.querySelector('input').select();
}

function status(k) {
  if (!k.enabled) return badge('revoked', 'bad');
  if (!k.usable) return badge('expired', 'warn');
  return badge('active', 'ok');
}

function keyTable(all, page) {
  const head = ['Name', 'Prefix', ...(page.ctx.admin ? ['Owner'] : []), 'Models', 'Limits', 'Expires', 'Last used', 'Spend', 'Status', 'Actions'];
  const rows = all.map((k) => [
    k.name,
    h('span', { class: 'mono' }, `${k.prefix}…`),
    ...(page.ctx.admin ? [k.owner || `#${k.owner_id}`] : []),
    h('span', { class: 'mono' }, k.models.join(', ')),
    h('div', { class: 'limits' }, keyLimitsLines(k)),
    k.expires ? fmtTime(k.expires) : 'never',
    fmtTime(k.last_used),
    [`${fmtNum(k.spend.requests)} req`, `${fmtNum(k.spend.input_tokens)} in`, `${fmtNum(k.spend.output_tokens)} out`,
      ...Object.entries(k.spend.units || {}).map(([u, n]) => fmtUnits(n, u))].join(' · '),
    status(k),
    h('div', { class: 'actions' }, keyActions(k, page)),
  ]);
  return table(`${all.length} key${all.length === 1 ? '' : 's'}`, head, rows);
}

function keyActions(k, page) {
  const act = (method, path, done) => async () => {
    await api(method, path);
    announce(done);
    await page.refresh();
  };
  return [
    k.enabled && h('button', { type: 'button', 'aria-label': `Edit key ${k.name}`, onclick: () => editKey(k, page) }, 'Edit'),
    k.enabled && confirmButton('Revoke', 'Confirm revoke', act('POST', `keys/${k.id}/revoke`, `Key ${k.name} revoked`), `Revoke key ${k.name}`),
    confirmButton('Delete', 'Confirm delete', act('DELETE', `keys/${k.id}`, `Key ${k.name} deleted`), `Delete key ${k.name}`),
  ];
}

// changed keeps the fields of body that differ from before: an edit sends
// only what the user changed, so saving a name does not resend (and round
// to the minute) an expiry the form shows.
function changed(body, before) {
  return Object.fromEntries(Object.entries(body).filter(([name, v]) => JSON.stringify(v) !== JSON.stringify(before[name])));
}

function editKey(k, page) {
  const initial = Object.fromEntries(keyFields(k).map((f) => [f.name, String(f.value)]));
  const before = { ...keyBody(initial), model_limits: normalLimits(k.model_limits) };
  const limits = modelLimitsEditor(k.model_limits);
  const cancel = h('button', { type: 'button', onclick: () => replace(page.editBox) }, 'Cancel');
  const f = form({
    label: `Edit key ${k.name}`,
    submit: 'Save',
    grid: true,
    fields: keyFields(k),
    extra: limits.box,
    onSubmit: async (v) => {
      const body = changed({ ...keyBody(v), model_limits: limits.value() }, before);
      await api('PATCH', `keys/${k.id}`, body).catch((e) => { throw limits.fieldError(e); });
      replace(page.editBox);
      announce(`Key ${v.name} saved`);
      await page.refresh();
    },
  });
  f.querySelector('.actions').append(cancel);
  replace(page.editBox, h('section', { class: 'card', 'aria-label': `Edit key ${k.name}` },
    h('h2', {}, `Edit key “${k.name}”`), f));
  f.elements.namedItem('name').focus();
}
