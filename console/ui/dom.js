// Small DOM helpers. Every page builds its elements with h(), which sets
// text as text: nothing from the server is ever parsed as HTML.

// h creates an element. attrs: plain attributes, plus `on<event>`
// listeners and `class`. children: nodes, strings, numbers, arrays, or
// null/false (skipped).
export function h(tag, attrs, ...children) {
  const el = document.createElement(tag);
  for (const [k, v] of Object.entries(attrs || {})) {
    if (v === null || v === undefined || v === false) continue;
    if (k.startsWith('on') && typeof v === 'function') el.addEventListener(k.slice(2), v);
    // Defaults too, so that form.reset() goes back to them.
    else if (k === 'value') { if ('defaultValue' in el) el.defaultValue = v; el.value = v; }
    else if (k === 'checked') { el.defaultChecked = !!v; el.checked = !!v; }
    else el.setAttribute(k, v === true ? '' : String(v));
  }
  append(el, children);
  return el;
}

function append(el, children) {
  for (const c of children) {
    if (c === null || c === undefined || c === false) continue;
    if (Array.isArray(c)) append(el, c);
    else el.append(c instanceof Node ? c : String(c));
  }
}

// replace swaps the content of el.
export function replace(el, ...children) {
  el.replaceChildren();
  append(el, children);
  return el;
}

let idSeq = 0;
export function uid(prefix) { return `${prefix}-${++idSeq}`; }

// announce speaks a short status through the page's live region.
export function announce(text) {
  const t = document.getElementById('toast');
  t.textContent = text;
  clearTimeout(announce.timer);
  announce.timer = setTimeout(() => { t.textContent = ''; }, 2500);
}

// copyText puts text on the clipboard and says so on the button.
export async function copyText(text, button) {
  let ok = true;
  try {
    await navigator.clipboard.writeText(text);
  } catch {
    ok = legacyCopy(text);
  }
  const label = button.textContent;
  button.textContent = ok ? 'Copied' : 'Copy failed';
  announce(ok ? 'Copied to the clipboard' : 'Could not copy; select the text and copy it by hand');
  setTimeout(() => { button.textContent = label; }, 1500);
  return ok;
}

// legacyCopy is for pages not in a secure context (plain http on a
// host other than localhost), where navigator.clipboard is missing.
function legacyCopy(text) {
  const ta = h('textarea', { class: 'offscreen', 'aria-hidden': 'true' }, text);
  document.body.append(ta);
  ta.select();
  let ok = false;
  try { ok = document.execCommand('copy'); } catch { ok = false; }
  ta.remove();
  return ok;
}

// copyButton copies what get() returns; label names what is copied, for
// screen readers.
export function copyButton(get, label) {
  const b = h('button', { type: 'button', class: 'copy', 'aria-label': label }, 'Copy');
  b.addEventListener('click', () => copyText(get(), b));
  return b;
}

// codeBlock is preformatted text with a copy button in a bar above it,
// where it covers no line of the text at any width.
export function codeBlock(text, label) {
  return h('div', { class: 'code' },
    h('div', { class: 'code-bar' }, copyButton(() => text, 'Copy ' + label)),
    h('pre', { tabindex: '0', 'aria-label': label }, h('code', {}, text)));
}

// field builds a labelled control. spec: {name, label, type, value,
// options: [[value, text]], help, placeholder, required, min, rows}.
export function field(spec) {
  const id = uid('f');
  const common = {
    id, name: spec.name, required: spec.required, placeholder: spec.placeholder,
    'aria-describedby': `${id}-help ${id}-err`, autocomplete: spec.autocomplete || 'off',
  };
  let control;
  if (spec.type === 'select') {
    control = h('select', common, (spec.options || []).map(([v, t]) =>
      h('option', { value: v, selected: String(v) === String(spec.value ?? '') }, t)));
  } else if (spec.type === 'textarea') {
    control = h('textarea', { ...common, rows: spec.rows || 3 }, spec.value ?? '');
  } else if (spec.type === 'checkbox') {
    control = h('input', { ...common, type: 'checkbox', checked: spec.value });
    return h('div', { class: 'field check' }, control, h('label', { for: id }, spec.label),
      help(id, spec.help), h('p', { id: `${id}-err`, class: 'err', hidden: true }));
  } else {
    control = h('input', { ...common, type: spec.type || 'text', value: spec.value ?? '', min: spec.min });
  }
  return h('div', { class: 'field' }, h('label', { for: id }, spec.label), control,
    help(id, spec.help), h('p', { id: `${id}-err`, class: 'err', hidden: true }));
}

function help(id, text) {
  return h('p', { id: `${id}-help`, class: 'help', hidden: !text }, text || '');
}

// form builds a form of fields, in columns when grid is set. onSubmit(values)
// may throw an APIError; its message is shown next to the field it names, or
// above the button.
export function form({ fields, submit, onSubmit, extra, label, grid }) {
  const general = h('p', { class: 'err', role: 'alert', hidden: true });
  const button = h('button', { type: 'submit', class: 'primary' }, submit);
  const f = h('form', { 'aria-label': label || submit, novalidate: true },
    grid ? h('div', { class: 'grid' }, fields.map(field)) : fields.map(field), extra, general, h('div', { class: 'actions' }, button));
  f.addEventListener('submit', async (ev) => {
    ev.preventDefault();
    clearErrors(f, general);
    button.disabled = true;
    try {
      await onSubmit(values(f), f);
    } catch (e) {
      showError(f, general, e);
    } finally {
      button.disabled = false;
    }
  });
  return f;
}

// values reads a form's controls by name.
export function values(f) {
  const out = {};
  for (const el of f.elements) {
    if (!el.name) continue;
    out[el.name] = el.type === 'checkbox' ? el.checked : el.value;
  }
  return out;
}

function clearErrors(f, general) {
  general.hidden = true;
  for (const el of f.querySelectorAll('[aria-invalid]')) el.removeAttribute('aria-invalid');
  for (const p of f.querySelectorAll('.field .err')) { p.hidden = true; p.textContent = ''; }
}

export function showError(f, general, e) {
  const control = e.field && f.elements.namedItem(e.field);
  if (control && control.id) {
    const p = document.getElementById(`${control.id}-err`);
    p.textContent = e.message;
    p.hidden = false;
    control.setAttribute('aria-invalid', 'true');
    control.focus();
    return;
  }
  general.textContent = e.message || String(e);
  general.hidden = false;
}

// confirmButton asks for a second click before doing something that
// cannot be undone (no modal dialogs, which also keeps it testable).
export function confirmButton(text, confirmText, action, label) {
  const b = h('button', { type: 'button', class: 'danger', 'aria-label': label }, text);
  // data-armed marks a button waiting for its second click, so that a page
  // refreshing itself can leave it be.
  const arm = (on) => {
    b.textContent = on ? confirmText : text;
    b.setAttribute('aria-label', on ? `${confirmText}: ${label}` : label);
    b.toggleAttribute('data-armed', on);
  };
  b.addEventListener('click', async () => {
    if (!b.hasAttribute('data-armed')) {
      arm(true);
      setTimeout(() => arm(false), 5000);
      return;
    }
    b.disabled = true;
    try { await action(); } catch (e) { announce(e.message); b.disabled = false; }
  });
  return b;
}

// table builds a data table; rows are arrays of cells (nodes or text).
// Each cell carries its column's name in data-label, which narrow screens
// show before it when rows become cards. A row may be followed by a detail
// row: detail(i) returns its content, shown across the columns, or null;
// with collapsed set, detail rows start hidden.
export function table(caption, head, rows, detail, { collapsed } = {}) {
  const body = [];
  rows.forEach((r, i) => {
    body.push(h('tr', {}, r.map((c, j) => h('td', { 'data-label': head[j] }, c))));
    const more = detail && detail(i);
    if (more) body.push(h('tr', { class: 'detail', hidden: collapsed }, h('td', { colspan: head.length }, more)));
  });
  return h('div', { class: 'scroll', tabindex: '0', role: 'region', 'aria-label': caption },
    h('table', {},
      h('caption', {}, caption),
      h('thead', {}, h('tr', {}, head.map((t) => h('th', { scope: 'col' }, t)))),
      h('tbody', {}, body.length ? body
        : h('tr', {}, h('td', { colspan: head.length, class: 'empty' }, 'Nothing yet.')))));
}

export function fmtTime(t) {
  if (!t) return '—';
  return new Date(t).toLocaleString();
}

export function fmtNum(n) {
  return Number(n || 0).toLocaleString();
}

// fmtUnits is a count in its unit, as words: "1 image", "2,048 characters".
export function fmtUnits(n, unit) {
  const words = unit.replaceAll('_', ' ');
  return `${fmtNum(n)} ${n === 1 ? words.replace(/s$/, '') : words}`;
}

export function fmtMs(v) {
  if (!v) return '—';
  if (v >= 1000) return `${(v / 1000).toFixed(2)} s`;
  return v < 10 ? `${v.toFixed(1)} ms` : `${Math.round(v)} ms`;
}

// list splits "a, b c" into ["a", "b", "c"].
export function list(s) {
  return String(s || '').split(/[\s,]+/).filter(Boolean);
}

export function badge(text, kind) {
  return h('span', { class: `badge ${kind || ''}` }, text);
}
