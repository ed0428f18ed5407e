// Models: what a key may use, and which channels serve each model. Also
// the helpers other pages share: a channel's health, the key picker, the
// model to preselect.
import { h, replace, table, badge, uid } from './dom.js';
import { api } from './api.js';

// health reads a channel's status as [text, badge kind, explanation,
// detail]: the circuit breaker's state, and for a closed circuit the
// recent error rate, so that a channel whose requests all fail does not
// look healthy before its circuit opens.
export function health(c) {
  const rate = `${Math.round((c.error_rate || 0) * 100)} % of the attempts of the last five minutes failed`;
  switch (c.state) {
    case 'disabled': return ['disabled', '', 'disabled: no request is sent to it'];
    case 'open': return ['open', 'bad', 'circuit open after failures in a row: no request is sent to it until then, when one probes it',
      `until ${new Date(c.open_until).toLocaleTimeString()}`];
    case 'half-open': return ['probing', 'warn', 'circuit half-open: one request probes whether it answers again'];
  }
  if (c.error_rate >= 0.5) return ['unhealthy', 'bad', `circuit closed, but ${rate}`];
  return ['healthy', 'ok', `circuit closed; ${rate}`];
}

// stateBadge shows a channel's health, and under it until when an open
// circuit stays open.
export function stateBadge(c) {
  const [text, kind, why, detail] = health(c);
  return h('span', { class: 'state', title: why }, badge(text, kind), detail && h('span', { class: 'state-detail' }, ` ${detail}`));
}

// answers reports whether a channel is likely to answer now.
export function answers(c) {
  return health(c)[1] === 'ok';
}

// preferredModel picks the model to preselect among models ({name,
// channels}): the most recent of recent (names, newest first) that is on a
// channel likely to answer, else the first model on such a channel, else
// the first model.
export function preferredModel(models, recent) {
  const works = (m) => m && m.channels.some(answers);
  const used = recent.map((n) => models.find((m) => m.name === n)).find(works);
  return (used || models.find(works) || models[0] || {}).name;
}

// recentModels are the models the caller's own keys used successfully
// lately, newest first (an admin's usage list holds everyone's rows).
export async function recentModels(me, keys) {
  try {
    const own = new Set(keys.filter((k) => k.owner_id === me.user.id).map((k) => k.id));
    const { rows } = await api('GET', 'usage?limit=50');
    return rows.filter((r) => own.has(r.key_id) && r.status < 400).map((r) => r.model);
  } catch {
    return []; // a preselection is a convenience: without it, the first model
  }
}

// keyPicker is a labelled select of the caller's usable keys, their own
// first. keys are all the keys the caller sees, usable or not.
export async function keyPicker(label, me) {
  const { keys } = await api('GET', 'keys');
  const mine = (k) => k.owner_id === me.user.id;
  const usable = keys.filter((k) => k.usable).sort((a, b) => mine(b) - mine(a));
  const id = uid('key');
  const select = h('select', { id, name: 'key' },
    usable.map((k) => h('option', { value: k.id }, `${k.name} (${k.prefix}…)${k.owner ? ` · ${k.owner}` : ''}`)));
  return { select, keys: usable, own: keys.filter(mine), field: h('div', { class: 'field' }, h('label', { for: id }, label), select) };
}

// noKeys says why there is no key to use: none yet, or none still active.
export function noKeys(picker) {
  const link = h('a', { href: '#/keys' }, 'Keys page');
  if (picker.own.length) {
    return h('p', { class: 'notice' }, `None of your keys is active: ${picker.own.length === 1 ? 'your key is' : 'they are'} revoked or expired. Create a new key on the `, link, ' to use this page.');
  }
  return h('p', { class: 'notice' }, 'You have no key yet. Create one on the ', link, ' first.');
}

export async function models(view, ctx) {
  const picker = await keyPicker('Key', ctx.me);
  if (!picker.keys.length) {
    view.append(noKeys(picker));
    return;
  }
  const out = h('div', { 'aria-live': 'polite' });
  const show = async () => {
    const { models: all } = await api('GET', `keys/${picker.select.value}/models`);
    replace(out, table(`${all.length} model${all.length === 1 ? '' : 's'} this key may use`, ['Model', 'Channels'],
      all.map((m) => [
        h('span', { class: 'mono' }, m.name),
        h('div', {}, m.channels.map((c) => h('div', {}, `${c.name} (${c.type}) `, stateBadge(c)))),
      ])));
  };
  picker.select.addEventListener('change', show);
  view.append(h('div', { class: 'card' }, picker.field, h('p', { class: 'muted' }, 'The models come from the key’s allow-list and the channels that serve them.')), out);
  await show();
}
