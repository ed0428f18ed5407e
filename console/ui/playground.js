// Playground: chat with a model through one of your keys, in any of the
// three API styles, with the reply streamed in as it arrives.
import { h, replace, field, codeBlock } from './dom.js';
import { api, request, errorOf } from './api.js';
import { STYLES, buildRequest, curl, parseEvent, parseReply, sseData } from './styles.js';
import { keyPicker, noKeys } from './models.js';

export async function playground(view, ctx) {
  const picker = await keyPicker('Key');
  if (!picker.keys.length) {
    view.append(noKeys());
    return;
  }
  const pg = new Playground(picker, ctx.publicURL);
  view.append(pg.render());
  await pg.loadModels();
}

class Playground {
  constructor(picker, publicURL) {
    this.picker = picker;
    this.publicURL = publicURL;
    this.history = []; // [{role: 'user'|'assistant', text}], resent each turn
    this.modelField = field({ name: 'model', label: 'Model', type: 'select', options: [] });
    this.styleField = field({ name: 'style', label: 'Send as', type: 'select', value: 'openai',
      options: Object.entries(STYLES).map(([k, s]) => [k, `${s.label} style`]) });
    this.streamField = field({ name: 'stream', label: 'Stream the reply', type: 'checkbox', value: true });
    this.systemField = field({ name: 'system', label: 'System prompt (optional)', type: 'textarea', rows: 2 });
    this.msgField = field({ name: 'message', label: 'Message', type: 'textarea', rows: 3, placeholder: 'Say hello…' });
    this.curlField = field({ name: 'show_curl', label: 'Show this call as curl', type: 'checkbox', value: false });
    this.log = h('div', { class: 'chat', role: 'log', 'aria-live': 'polite', 'aria-label': 'Conversation' });
    this.stats = h('p', { class: 'stats', role: 'status', 'aria-label': 'Usage and latency' });
    this.curlBox = h('div', { hidden: true });
    this.sendButton = h('button', { type: 'submit', class: 'primary' }, 'Send');
  }

  control(f) { return f.querySelector('input, select, textarea'); }

  render() {
    this.picker.select.addEventListener('change', () => this.loadModels());
    for (const f of [this.modelField, this.styleField, this.systemField, this.msgField, this.streamField]) {
      this.control(f).addEventListener('input', () => this.showCurl());
    }
    this.control(this.curlField).addEventListener('change', () => this.showCurl());
    const msg = this.control(this.msgField);
    msg.addEventListener('keydown', (ev) => {
      if (ev.key === 'Enter' && (ev.ctrlKey || ev.metaKey)) compose.requestSubmit();
    });
    const compose = h('form', { 'aria-label': 'Send a message' }, this.msgField,
      h('div', { class: 'actions' }, this.sendButton,
        h('button', { type: 'button', onclick: () => this.reset() }, 'New chat')));
    compose.addEventListener('submit', (ev) => { ev.preventDefault(); this.send(); });
    return h('div', {},
      h('section', { class: 'card grid', 'aria-label': 'Settings' },
        this.picker.field, this.modelField, this.styleField, this.streamField),
      h('div', { class: 'card' }, this.systemField),
      this.log, this.stats, compose,
      h('div', { class: 'card' }, this.curlField, this.curlBox));
  }

  async loadModels() {
    const { models } = await api('GET', `keys/${this.picker.select.value}/models`);
    const select = this.control(this.modelField);
    replace(select, models.map((m) => h('option', { value: m.name }, m.name)));
    if (!models.length) select.append(h('option', { value: '' }, 'no model available'));
    this.showCurl();
  }

  chat(extra) {
    const v = (f) => this.control(f);
    const messages = extra ? [...this.history, { role: 'user', text: extra }] : this.history;
    return { model: v(this.modelField).value, system: v(this.systemField).value.trim(), messages, stream: v(this.streamField).checked };
  }

  showCurl() {
    const on = this.control(this.curlField).checked;
    this.curlBox.hidden = !on;
    if (!on) return;
    const chat = this.chat(this.control(this.msgField).value.trim() || 'Hello');
    replace(this.curlBox, Object.entries(STYLES).map(([style, s]) =>
      h('div', {}, h('h3', {}, `${s.label} style`), codeBlock(curl(style, this.publicURL, chat), `${s.label} curl command`))));
  }

  reset() {
    this.history = [];
    replace(this.log);
    this.stats.textContent = '';
    this.showCurl();
  }

  bubble(role, text) {
    const body = h('span', { class: 'text' }, text);
    const b = h('div', { class: `msg ${role}` }, h('span', { class: 'who' }, role === 'user' ? 'You' : role === 'assistant' ? 'Model' : 'Error'), body);
    this.log.append(b);
    this.log.scrollTop = this.log.scrollHeight;
    return body;
  }

  async send() {
    const msg = this.control(this.msgField);
    const text = msg.value.trim();
    if (!text || this.sendButton.disabled) return;
    const chat = this.chat(text);
    const style = this.control(this.styleField).value;
    msg.value = '';
    this.sendButton.disabled = true;
    this.bubble('user', text);
    const out = this.bubble('assistant', '');
    out.parentElement.setAttribute('aria-busy', 'true');
    try {
      const r = await this.call(style, chat, out);
      this.history = [...chat.messages, { role: 'assistant', text: r.text }];
      this.stats.textContent = statsLine(r);
    } catch (e) {
      out.parentElement.remove();
      this.bubble('error', e.message);
      msg.value = text; // lets the user retry
      this.stats.textContent = '';
    } finally {
      out.parentElement.removeAttribute('aria-busy');
      this.sendButton.disabled = false;
      this.showCurl();
    }
  }

  // call sends the chat and writes the reply into out as it arrives.
  async call(style, chat, out) {
    const r = buildRequest(style, chat);
    const t0 = performance.now();
    const res = await request('POST', `playground/${this.picker.select.value}${r.path}`, r.body, r.headers);
    if (!res.ok) throw await errorOf(res, 'playground');
    const result = { text: '', usage: {}, first: 0, total: 0, style };
    const add = (part) => {
      if (part.usage) Object.assign(result.usage, clean(part.usage));
      if (!part.text) return;
      if (!result.first) result.first = performance.now() - t0;
      result.text += part.text;
      out.textContent = result.text;
      this.log.scrollTop = this.log.scrollHeight;
    };
    if (chat.stream) {
      for await (const data of sseData(res.body)) {
        const ev = parseEvent(style, data);
        if (ev.error) throw new Error(`The stream ended with an error: ${ev.error}`);
        add(ev);
      }
    } else {
      add(parseReply(style, await res.json()));
    }
    result.total = performance.now() - t0;
    return result;
  }
}

// clean drops undefined counts, so a later event does not erase an
// earlier one.
function clean(u) {
  return Object.fromEntries(Object.entries(u).filter(([, v]) => v !== undefined && v !== null));
}

function statsLine(r) {
  const parts = [];
  if (r.first) parts.push(`first token after ${Math.round(r.first)} ms`);
  parts.push(`total ${Math.round(r.total)} ms`);
  if (r.usage.input !== undefined) parts.push(`${r.usage.input} input tokens`);
  if (r.usage.output !== undefined) parts.push(`${r.usage.output} output tokens`);
  return `${STYLES[r.style].label} style · ${parts.join(' · ')}`;
}
