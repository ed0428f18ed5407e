// Playground: try a model through one of your keys. Chat in any of the
// three API styles, with the reply streamed in as it arrives; embeddings,
// image generation and speech through the OpenAI-style endpoints. Every
// answer, or error, says which channels the gateway tried and its request
// id.
import { h, replace, field, codeBlock, uid, fmtMs } from './dom.js';
import { api, request, errorOf } from './api.js';
import { STYLES, buildRequest, curl, curlCommand, parseEvent, parseReply, sseData } from './styles.js';
import { keyPicker, noKeys, preferredModel, recentModels } from './models.js';

export async function playground(view, ctx) {
  const picker = await keyPicker('Key', ctx.me);
  if (!picker.keys.length) {
    view.append(noKeys(picker));
    return;
  }
  const recent = await recentModels(ctx.me, picker.own);
  const chat = new Chat(picker, ctx.publicURL);
  const panels = [
    ['chat', 'Chat', chat],
    ['embeddings', 'Embeddings', new MediaPanel(picker, ctx.publicURL, EMBEDDINGS)],
    ['images', 'Images', new MediaPanel(picker, ctx.publicURL, IMAGES)],
    ['speech', 'Speech', new MediaPanel(picker, ctx.publicURL, SPEECH)],
  ];
  const load = async () => {
    const { models } = await api('GET', `keys/${picker.select.value}/models`);
    for (const [, , p] of panels) p.setModels(models, recent);
  };
  picker.select.addEventListener('change', () => load().catch(() => {}));
  view.append(h('div', { class: 'card' }, picker.field), tabs(panels.map(([name, label, p]) => [name, label, p.render()])));
  await load();
}

// tabs shows one panel at a time under a row of tab buttons.
function tabs(list) {
  const bar = h('div', { class: 'tabs', role: 'tablist', 'aria-label': 'What to try' });
  const panels = [];
  list.forEach(([name, label, content], i) => {
    const id = uid('tab');
    const panel = h('section', { id: `${id}-panel`, role: 'tabpanel', 'aria-labelledby': id, 'data-tab': name, hidden: i > 0 }, content);
    const tab = h('button', { id, type: 'button', role: 'tab', 'data-tab': name, 'aria-controls': `${id}-panel`, 'aria-selected': String(i === 0) }, label);
    tab.addEventListener('click', () => {
      for (const t of bar.children) t.setAttribute('aria-selected', String(t === tab));
      for (const p of panels) p.hidden = p !== panel;
    });
    bar.append(tab);
    panels.push(panel);
  });
  return h('div', {}, bar, panels);
}

// fillModels offers the models that serve an endpoint family in a select,
// the preferred one selected.
function fillModels(select, models, family, recent) {
  const served = models.filter((m) => !m.endpoints || m.endpoints.includes(family));
  const pick = preferredModel(served, recent);
  replace(select, served.map((m) => h('option', { value: m.name, selected: m.name === pick }, m.name)));
  if (!served.length) select.append(h('option', { value: '' }, `no model serves ${family}`));
}

// trail reads what the gateway says of a playground request: its id and
// the channels it tried, with their outcomes.
function trail(res) {
  let attempts = [];
  try {
    attempts = JSON.parse(decodeURIComponent(res.headers.get('X-Rosetta-Attempts') || '[]'));
  } catch { /* none to show */ }
  return { id: res.headers.get('X-Request-Id') || '', attempts };
}

// trailLine shows a trail: "Request req_… · refused: 502, connection
// refused to 127.0.0.1:1, 1.2 ms → demo: answered (200), 35 ms".
function trailLine(t) {
  const steps = t.attempts.map((a) => h('span', { class: a.error ? 'attempt failed' : 'attempt' },
    h('strong', {}, a.channel), a.error ? `: ${a.status}, ${a.error}` : `: answered (${a.status})`, `, ${fmtMs(a.duration_ms)}`));
  const tried = steps.length ? steps.flatMap((s, i) => (i ? [' → ', s] : [s])) : ['no channel was tried'];
  return h('p', { class: 'trail' }, 'Request ', h('code', { class: 'request-id' }, t.id || 'unknown'), ' · ', tried);
}

// send posts a call of the playground; a failed one throws an Error that
// carries the trail.
async function send(keyID, path, body, headers) {
  const res = await request('POST', `playground/${keyID}${path}`, body, headers);
  const t = trail(res);
  if (!res.ok) {
    const e = await errorOf(res, 'playground');
    e.trail = t;
    throw e;
  }
  return { res, trail: t };
}

class Chat {
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
    this.stats = h('div', { class: 'stats', role: 'status', 'aria-label': 'Usage and latency' });
    this.curlBox = h('div', { hidden: true });
    this.sendButton = h('button', { type: 'submit', class: 'primary' }, 'Send');
  }

  control(f) { return f.querySelector('input, select, textarea'); }

  setModels(models, recent) {
    fillModels(this.control(this.modelField), models, 'chat', recent);
    this.showCurl();
  }

  render() {
    for (const f of [this.modelField, this.styleField, this.systemField, this.msgField, this.streamField]) {
      this.control(f).addEventListener('input', () => this.showCurl());
    }
    this.control(this.curlField).addEventListener('change', () => this.showCurl());
    const msg = this.control(this.msgField);
    msg.addEventListener('keydown', (ev) => {
      if (ev.key === 'Enter' && (ev.ctrlKey || ev.metaKey)) compose.requestSubmit();
    });
    const compose = h('form', { class: 'compose', 'aria-label': 'Send a message' }, this.msgField,
      h('div', { class: 'actions' }, this.sendButton,
        h('button', { type: 'button', onclick: () => this.reset() }, 'New chat')));
    compose.addEventListener('submit', (ev) => { ev.preventDefault(); this.send(); });
    return h('div', {},
      h('div', { class: 'card grid', role: 'group', 'aria-label': 'Settings' }, this.modelField, this.styleField, this.streamField),
      h('div', { class: 'card' }, this.systemField),
      this.log, this.stats, compose,
      h('div', { class: 'card' }, this.curlField, this.curlBox));
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
    replace(this.stats);
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
      replace(this.stats, h('p', {}, statsLine(r)), trailLine(r.trail));
    } catch (e) {
      out.parentElement.remove();
      const b = this.bubble('error', e.message).parentElement;
      if (e.trail) b.append(trailLine(e.trail));
      this.log.scrollTop = this.log.scrollHeight;
      msg.value = text; // lets the user retry
      replace(this.stats);
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
    const { res, trail: t } = await send(this.picker.select.value, r.path, r.body, r.headers);
    const result = { text: '', usage: {}, first: 0, total: 0, style, trail: t };
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
        if (ev.error) throw Object.assign(new Error(`The stream ended with an error: ${ev.error}`), { trail: t });
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

// The OpenAI-style endpoints of the other tabs: the form's fields, the
// request they make, and how the answer is shown.
const EMBEDDINGS = {
  family: 'embeddings',
  path: '/v1/embeddings',
  fields: [{ name: 'input', label: 'Text to embed', type: 'textarea', rows: 3, value: 'The quick brown fox' }],
  submit: 'Embed',
  body: (v) => ({ model: v.model, input: v.input }),
  show: async (res) => {
    const { data, usage } = await res.json();
    const vec = data?.[0]?.embedding || [];
    const first = vec.slice(0, 8).map((x) => Number(x).toFixed(4)).join(', ');
    return [
      h('p', { class: 'vector-length' }, `Vector of ${vec.length} dimensions${usage ? ` · ${usage.prompt_tokens} input tokens` : ''}`),
      h('p', {}, 'First values: ', h('code', { class: 'vector-head' }, `[${first}${vec.length > 8 ? ', …' : ''}]`)),
    ];
  },
};

const IMAGES = {
  family: 'images',
  path: '/v1/images/generations',
  fields: [{ name: 'prompt', label: 'Prompt', type: 'textarea', rows: 2, value: 'A red fox in the snow' },
    { name: 'size', label: 'Size', type: 'select', value: '1024x1024', options: ['1024x1024', '1024x1536', '1536x1024'].map((s) => [s, s]) }],
  submit: 'Generate',
  body: (v) => ({ model: v.model, prompt: v.prompt, n: 1, size: v.size }),
  show: async (res) => {
    const { data } = await res.json();
    const img = data?.[0] || {};
    if (img.b64_json) return h('img', { class: 'generated', src: `data:image/png;base64,${img.b64_json}`, alt: 'The generated image' });
    if (img.url?.startsWith('data:image/')) return h('img', { class: 'generated', src: img.url, alt: 'The generated image' });
    // The console's pages load nothing from other origins: link to it.
    if (img.url) return h('p', {}, h('a', { href: img.url, target: '_blank', rel: 'noopener noreferrer' }, 'Open the generated image'));
    return h('p', { class: 'err' }, 'The answer holds no image.');
  },
};

const SPEECH = {
  src: '', // the blob: URL of the last speech, released when the next one comes
  family: 'audio',
  path: '/v1/audio/speech',
  fields: [{ name: 'input', label: 'Text to speak', type: 'textarea', rows: 2, value: 'Hello from the Rosetta playground.' },
    { name: 'voice', label: 'Voice', type: 'select', value: 'alloy', options: ['alloy', 'ash', 'coral', 'echo', 'fable', 'nova', 'onyx', 'sage', 'shimmer'].map((s) => [s, s]) }],
  submit: 'Speak',
  body: (v) => ({ model: v.model, input: v.input, voice: v.voice }),
  show: async (res) => {
    const blob = await res.blob();
    if (SPEECH.src) URL.revokeObjectURL(SPEECH.src); // the last one's player is gone
    const src = URL.createObjectURL(blob);
    SPEECH.src = src;
    return [h('audio', { controls: true, src, 'aria-label': 'The generated speech' }),
      h('p', { class: 'muted' }, `${blob.type || 'audio'} · ${(blob.size / 1024).toFixed(1)} KiB`)];
  },
};

// MediaPanel is the tab of one of EMBEDDINGS, IMAGES, SPEECH.
class MediaPanel {
  constructor(picker, publicURL, spec) {
    this.picker = picker;
    this.publicURL = publicURL;
    this.spec = spec;
    this.modelField = field({ name: 'model', label: 'Model', type: 'select', options: [] });
    this.out = h('div', { class: 'result', role: 'status', 'aria-live': 'polite' });
    this.curlBox = h('div');
  }

  setModels(models, recent) {
    fillModels(this.modelField.querySelector('select'), models, this.spec.family, recent);
  }

  render() {
    const button = h('button', { type: 'submit', class: 'primary' }, this.spec.submit);
    const f = h('form', { class: 'card', 'aria-label': `${this.spec.submit}: ${this.spec.family}` },
      h('div', { class: 'grid' }, this.modelField, this.spec.fields.filter((s) => s.type === 'select').map(field)),
      this.spec.fields.filter((s) => s.type !== 'select').map(field),
      h('div', { class: 'actions' }, button));
    f.addEventListener('submit', async (ev) => {
      ev.preventDefault();
      button.disabled = true;
      try {
        await this.send(f);
      } finally {
        button.disabled = false;
      }
    });
    return h('div', {}, f, this.out, this.curlBox);
  }

  async send(f) {
    const v = Object.fromEntries(new FormData(f));
    const body = this.spec.body(v);
    replace(this.curlBox, h('details', {}, h('summary', {}, 'This call as curl'),
      codeBlock(curlCommand(this.publicURL + this.spec.path, 'openai', {}, body), `${this.spec.family} curl command`)));
    replace(this.out, h('p', { class: 'muted' }, 'Waiting for the answer…'));
    this.out.setAttribute('aria-busy', 'true');
    try {
      const { res, trail: t } = await send(this.picker.select.value, this.spec.path, body);
      replace(this.out, await this.spec.show(res), trailLine(t));
    } catch (e) {
      replace(this.out, h('p', { class: 'err', role: 'alert' }, e.message), e.trail && trailLine(e.trail));
    } finally {
      this.out.removeAttribute('aria-busy');
    }
  }
}
