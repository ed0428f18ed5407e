// Home: where to point clients, for each style, with snippets to paste.
import { h, replace, copyButton, codeBlock, uid } from './dom.js';
import { api } from './api.js';
import { STYLES, SNIPPET_STYLES, snippets } from './styles.js';
import { preferredModel, recentModels } from './models.js';

export async function home(view, ctx) {
  const model = await snippetModel(ctx);
  const base = ctx.publicURL;
  const urls = h('section', { class: 'card', 'aria-labelledby': 'base-urls' },
    h('h2', { id: 'base-urls' }, 'Base URLs'),
    h('p', { class: 'muted intro' }, 'Give an SDK the base URL of the API style it speaks, as it is, in the option named below it, with a key from the ',
      h('a', { href: '#/keys' }, 'Keys'), ' page.'),
    Object.entries(STYLES).map(([style, s]) => urlRow(style, s, s.base(base))));

  const pick = uid('style');
  const select = h('select', { id: pick },
    Object.entries(SNIPPET_STYLES).map(([style, label]) => h('option', { value: style }, label)));
  const shown = h('div', { 'aria-live': 'polite' });
  const show = () => replace(shown, snippets(select.value, base, model).map(([lang, text]) =>
    h('div', {}, h('h3', {}, lang), codeBlock(text, `${SNIPPET_STYLES[select.value]} ${lang} snippet`))));
  select.addEventListener('change', show);
  show();

  view.append(urls, h('section', { class: 'card', 'aria-labelledby': 'snippets' },
    h('h2', { id: 'snippets' }, 'Snippets'),
    h('p', { class: 'muted intro' }, 'Set ROSETTA_KEY to one of your keys first: ', h('code', {}, 'export ROSETTA_KEY=sk-rst-…')),
    h('div', { class: 'field' }, h('label', { for: pick }, 'API style'), select),
    shown));
}

function urlRow(style, s, url) {
  const id = uid('url');
  return h('div', { class: 'url-row' },
    h('label', { class: 'label', for: id }, `${s.label} style`),
    h('input', { id, readonly: true, value: url, 'data-style': style, 'aria-describedby': `${id}-sdk` }),
    copyButton(() => url, `Copy the ${s.label} base URL`),
    h('p', { id: `${id}-sdk`, class: 'help' }, `SDK option: ${s.option}`));
}

// snippetModel is a model the caller can use, to make the snippets
// runnable as they are: the one they used last, else one on a channel that
// answers. Without a key yet, any model the gateway serves will do, since
// a new key may allow it.
async function snippetModel(ctx) {
  try {
    const { keys } = await api('GET', 'keys');
    const key = keys.find((k) => k.usable && k.owner_id === ctx.me.user.id);
    const { models } = await api('GET', key ? `keys/${key.id}/models` : 'models');
    const name = preferredModel(models, await recentModels(ctx.me, keys));
    if (name) return name;
  } catch { /* the snippets still work with a placeholder */ }
  return 'MODEL_NAME';
}
