// Home: where to point clients, for each style, with snippets to paste.
import { h, replace, copyButton, codeBlock, uid } from './dom.js';
import { api } from './api.js';
import { STYLES, snippets } from './styles.js';

export async function home(view, ctx) {
  const model = await firstModel();
  const base = ctx.publicURL;
  const urls = h('section', { class: 'card', 'aria-labelledby': 'base-urls' },
    h('h2', { id: 'base-urls' }, 'Base URLs'),
    h('p', { class: 'muted' }, 'Point an SDK or tool at the base URL of the API style it speaks, with a key from the ',
      h('a', { href: '#/keys' }, 'Keys'), ' page.'),
    Object.entries(STYLES).map(([style, s]) => urlRow(style, s.label, s.base(base))));

  const pick = uid('style');
  const select = h('select', { id: pick },
    Object.entries(STYLES).map(([style, s]) => h('option', { value: style }, s.label)));
  const shown = h('div', { 'aria-live': 'polite' });
  const show = () => replace(shown, snippets(select.value, base, model).map(([lang, text]) =>
    h('div', {}, h('h3', {}, lang), codeBlock(text, `${STYLES[select.value].label} ${lang} snippet`))));
  select.addEventListener('change', show);
  show();

  view.append(urls, h('section', { class: 'card', 'aria-labelledby': 'snippets' },
    h('h2', { id: 'snippets' }, 'Snippets'),
    h('p', { class: 'muted' }, 'Set ROSETTA_KEY to one of your keys first: ', h('code', {}, 'export ROSETTA_KEY=sk-rst-…')),
    h('div', { class: 'field' }, h('label', { for: pick }, 'API style'), select),
    shown));
}

function urlRow(style, label, url) {
  const id = uid('url');
  return h('div', { class: 'url-row' },
    h('label', { class: 'label', for: id }, `${label} style`),
    h('input', { id, readonly: true, value: url, 'data-style': style }),
    copyButton(() => url, `Copy the ${label} base URL`));
}

// firstModel is a model one of the caller's keys can use, to make the
// snippets runnable as they are.
async function firstModel() {
  try {
    const { keys } = await api('GET', 'keys');
    const key = keys.find((k) => k.usable);
    if (key) {
      const { models } = await api('GET', `keys/${key.id}/models`);
      if (models.length) return models[0].name;
    }
  } catch { /* the snippets still work with a placeholder */ }
  return 'MODEL_NAME';
}
