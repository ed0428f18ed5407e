// Rate limits on the Keys and Channels pages: how they read in the lists,
// and the keys form's editor of a key's limits on single models.
import { h, uid, fmtNum } from './dom.js';
import { APIError } from './api.js';

// limitsText is requests and tokens per minute in words, "—" for none.
function limitsText(rpm, tpm) {
  const parts = [rpm && `${fmtNum(rpm)} rpm`, tpm && `${fmtNum(tpm)} tpm`].filter(Boolean);
  return parts.length ? parts.join(' · ') : '—';
}

// limitsLines is rpm and tpm a line each, for a narrow table column.
export function limitsLines(rpm, tpm) {
  if (!rpm && !tpm) return h('span', { class: 'limit-line' }, 'no limits');
  return [rpm && `${fmtNum(rpm)} rpm`, tpm && `${fmtNum(tpm)} tpm`].filter(Boolean)
    .map((t) => h('span', { class: 'limit-line' }, t));
}

// keyLimitsLines is a key's own limits as limitsLines has them, then its
// limits on single models, a line each. A key with model limits only
// shows those: "no limits" above them would say the opposite.
export function keyLimitsLines(k) {
  const models = Object.entries(k.model_limits || {}).map(([model, l]) =>
    h('span', { class: 'model-limit' }, h('span', { class: 'mono' }, model), `: ${limitsText(l.rpm, l.tpm)}`));
  return k.rpm || k.tpm || !models.length ? [limitsLines(k.rpm, k.tpm), models] : models;
}

// normalLimits is limits as the editor reads them back: every model with
// both numbers, in the order given.
export function normalLimits(limits) {
  return Object.fromEntries(Object.entries(limits || {}).map(([m, l]) => [m, { rpm: l.rpm || 0, tpm: l.tpm || 0 }]));
}

const PARTS = [['model', 'Model', 'text'], ['rpm', 'Requests/min', 'number'], ['tpm', 'Tokens/min', 'number']];

// modelLimitsEditor edits {model: {rpm, tpm}} as rows of a model and its
// two numbers. Its fieldset is named model_limits, so the form shows the
// API's errors about them under it (see fieldError).
export function modelLimitsEditor(initial) {
  const id = uid('ml');
  const rows = h('div', { class: 'ml-rows' });
  const addRow = (model = '', l = {}) => {
    const row = h('div', { class: 'ml-row' },
      PARTS.map(([part, label, type]) => h('label', {}, h('span', {}, label),
        h('input', { type, 'data-part': part, min: type === 'number' ? 0 : null, value: part === 'model' ? model : l[part] || '',
          placeholder: part === 'model' ? 'gpt-4o' : '0', autocomplete: 'off' }))),
      h('button', { type: 'button', class: 'danger', onclick: () => { row.remove(); relabel(); } }, 'Remove'));
    rows.append(row);
    relabel();
    return row;
  };
  // Each Remove button names its row's model, for screen readers.
  const relabel = () => {
    [...rows.children].forEach((r, i) => {
      const model = r.querySelector('[data-part=model]').value.trim();
      r.querySelector('button').setAttribute('aria-label', `Remove the limit on ${model || `row ${i + 1}`}`);
    });
  };
  rows.addEventListener('input', relabel);
  const reset = () => {
    rows.replaceChildren();
    for (const [m, l] of Object.entries(initial || {})) addRow(m, l);
  };
  reset();
  const box = h('fieldset', { class: 'field model-limits', id, name: 'model_limits', 'aria-describedby': `${id}-help ${id}-err` },
    h('legend', {}, 'Limits on one model'),
    h('p', { id: `${id}-help`, class: 'help' },
      'Optional, beside the key’s own limits: a model’s requests and tokens per minute for this key (0 = unlimited). A request over one gets a 429 naming the model.'),
    rows,
    h('button', { type: 'button', onclick: () => addRow().querySelector('input').focus() }, 'Add a model limit'),
    h('p', { id: `${id}-err`, class: 'err', hidden: true }));

  // value reads the rows: a row left empty is skipped.
  const value = () => {
    const out = new Map();
    for (const r of rows.children) {
      const [model, rpm, tpm] = PARTS.map(([part]) => r.querySelector(`[data-part=${part}]`).value.trim());
      if (!model && !rpm && !tpm) continue;
      if (!model) throw invalid(r, 'model', 'Name the model of each limit, or remove its row.');
      if (out.has(model)) throw invalid(r, 'model', `${model} has two rows; keep one.`);
      out.set(model, { rpm: Number(rpm || 0), tpm: Number(tpm || 0) });
    }
    return Object.fromEntries(out);
  };
  const invalid = (row, part, message) => {
    const input = row.querySelector(`[data-part=${part}]`);
    setTimeout(() => { input.setAttribute('aria-invalid', 'true'); input.focus(); });
    return new APIError(400, message, 'model_limits');
  };
  // fieldError points an API error about model_limits["m"].rpm at its
  // row's input and shows its message under the fieldset.
  const fieldError = (e) => {
    const m = /^model_limits\[("(?:[^"\\]|\\.)*")\](?:\.(rpm|tpm))?$/.exec(e.field || '');
    if (!m) return e;
    const model = JSON.parse(m[1]);
    const row = [...rows.children].find((r) => r.querySelector('[data-part=model]').value.trim() === model);
    return row ? invalid(row, m[2] || 'model', e.message) : new APIError(e.status, e.message, 'model_limits');
  };
  return { box, value, reset, fieldError };
}
