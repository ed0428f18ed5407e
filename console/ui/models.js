// Models: what a key may use, and which channels serve each model.
import { h, replace, table, badge, uid } from './dom.js';
import { api } from './api.js';

// stateBadge shows a channel's breaker state.
export function stateBadge(state) {
  const kinds = { closed: ['healthy', 'ok'], 'half-open': ['probing', 'warn'], open: ['cooling down', 'bad'], disabled: ['disabled', ''] };
  const [text, kind] = kinds[state] || [state || 'unknown', ''];
  return badge(text, kind);
}

// keyPicker is a labelled select of the caller's usable keys.
export async function keyPicker(label) {
  const { keys } = await api('GET', 'keys');
  const usable = keys.filter((k) => k.usable);
  const id = uid('key');
  const select = h('select', { id, name: 'key' },
    usable.map((k) => h('option', { value: k.id }, `${k.name} (${k.prefix}…)${k.owner ? ` · ${k.owner}` : ''}`)));
  return { select, keys: usable, field: h('div', { class: 'field' }, h('label', { for: id }, label), select) };
}

export function noKeys() {
  return h('p', { class: 'notice' }, 'You have no active key yet. ', h('a', { href: '#/keys' }, 'Create one'), ' first.');
}

export async function models(view) {
  const picker = await keyPicker('Key');
  if (!picker.keys.length) {
    view.append(noKeys());
    return;
  }
  const out = h('div', { 'aria-live': 'polite' });
  const show = async () => {
    const { models: all } = await api('GET', `keys/${picker.select.value}/models`);
    replace(out, table(`${all.length} model${all.length === 1 ? '' : 's'} this key may use`, ['Model', 'Channels'],
      all.map((m) => [
        h('span', { class: 'mono' }, m.name),
        h('div', {}, m.channels.map((c) => h('div', {}, `${c.name} (${c.type}) `, stateBadge(c.state)))),
      ])));
  };
  picker.select.addEventListener('change', show);
  view.append(h('div', { class: 'card' }, picker.field, h('p', { class: 'muted' }, 'The models come from the key’s allow-list and the channels that serve them.')), out);
  await show();
}
