// The three API styles the gateway speaks: how to write a chat request in
// each, how to read its replies and streams, and how to show the same call
// as curl or SDK code.

// STYLES: base is the URL each style's official SDKs take as their base
// URL, exactly (the Gemini SDKs add /v1beta themselves, so they take the
// root), and option names where it goes in each SDK.
export const STYLES = {
  openai: { label: 'OpenAI', base: (u) => `${u}/v1`, option: 'base_url (Python), baseURL (JavaScript), option.WithBaseURL (Go)' },
  anthropic: { label: 'Anthropic', base: (u) => u, option: 'base_url (Python), baseURL (JavaScript), option.WithBaseURL (Go)' },
  gemini: { label: 'Gemini', base: (u) => u,
    option: 'http_options.base_url (Python), httpOptions.baseUrl (JavaScript), HTTPOptions.BaseURL (Go); the SDK adds /v1beta' },
};

// SNIPPET_STYLES are the styles the home page has snippets for: the chat
// styles and OpenAI's Responses API, which OpenAI SDKs reach at the same
// base URL.
export const SNIPPET_STYLES = {
  openai: 'OpenAI Chat Completions',
  responses: 'OpenAI Responses',
  anthropic: 'Anthropic Messages',
  gemini: 'Gemini',
};

const ANTHROPIC_VERSION = '2023-06-01';

// buildRequest writes a chat, {model, system, messages: [{role, text}],
// stream}, as one style's request: {path, headers, body}.
export function buildRequest(style, chat) {
  const { model, system, messages, stream } = chat;
  if (style === 'anthropic') {
    const body = { model, max_tokens: 1024, messages: messages.map((m) => ({ role: m.role, content: m.text })) };
    if (system) body.system = system;
    if (stream) body.stream = true;
    return { path: '/v1/messages', headers: { 'anthropic-version': ANTHROPIC_VERSION }, body };
  }
  if (style === 'gemini') {
    const body = {
      contents: messages.map((m) => ({ role: m.role === 'assistant' ? 'model' : 'user', parts: [{ text: m.text }] })),
    };
    if (system) body.systemInstruction = { parts: [{ text: system }] };
    const method = stream ? 'streamGenerateContent?alt=sse' : 'generateContent';
    return { path: `/v1beta/models/${encodeURIComponent(model)}:${method}`, headers: {}, body };
  }
  const msgs = messages.map((m) => ({ role: m.role, content: m.text }));
  if (system) msgs.unshift({ role: 'system', content: system });
  const body = { model, messages: msgs };
  if (stream) Object.assign(body, { stream: true, stream_options: { include_usage: true } });
  return { path: '/v1/chat/completions', headers: {}, body };
}

// authHeader is how a style's clients send the key.
function authHeader(style, key) {
  return { openai: `Authorization: Bearer ${key}`, anthropic: `x-api-key: ${key}`, gemini: `x-goog-api-key: ${key}` }[style];
}

// sq quotes a string for a POSIX shell.
function sq(s) {
  return `'${String(s).replace(/'/g, `'\\''`)}'`;
}

// curlCommand is a ready-to-paste curl command; the key is read from
// $ROSETTA_KEY so it never lands in shell history.
export function curlCommand(url, style, headers, body, stream) {
  const lines = [`curl${stream ? ' -N' : ''} ${sq(url)}`, `-H "${authHeader(style, '$ROSETTA_KEY')}"`];
  for (const [k, v] of Object.entries(headers || {})) lines.push(`-H ${sq(`${k}: ${v}`)}`);
  lines.push(`-H 'Content-Type: application/json'`, `-d ${sq(JSON.stringify(body))}`);
  return lines.join(' \\\n  ');
}

// curl is a chat as a curl command.
export function curl(style, publicURL, chat) {
  const r = buildRequest(style, chat);
  return curlCommand(publicURL + r.path, style, r.headers, r.body, chat.stream);
}

// snippets are short programs using each style's official SDK: [[language, text]].
export function snippets(style, publicURL, model) {
  const m = JSON.stringify(model);
  if (style === 'responses') {
    return [['curl', curlCommand(`${publicURL}/v1/responses`, 'openai', {}, { model, input: 'Hello' })],
      ['Python (openai)', `import os
from openai import OpenAI

client = OpenAI(base_url="${publicURL}/v1", api_key=os.environ["ROSETTA_KEY"])
response = client.responses.create(model=${m}, input="Hello")
print(response.output_text)`],
      ['JavaScript (openai)', `import OpenAI from "openai";

const client = new OpenAI({ baseURL: "${publicURL}/v1", apiKey: process.env.ROSETTA_KEY });
const response = await client.responses.create({ model: ${m}, input: "Hello" });
console.log(response.output_text);`]];
  }
  const hello = { model, messages: [{ role: 'user', text: 'Hello' }] };
  const sdk = {
    openai: [
      ['Python (openai)', `import os
from openai import OpenAI

client = OpenAI(base_url="${publicURL}/v1", api_key=os.environ["ROSETTA_KEY"])
reply = client.chat.completions.create(
    model=${m},
    messages=[{"role": "user", "content": "Hello"}],
)
print(reply.choices[0].message.content)`],
      ['JavaScript (openai)', `import OpenAI from "openai";

const client = new OpenAI({ baseURL: "${publicURL}/v1", apiKey: process.env.ROSETTA_KEY });
const reply = await client.chat.completions.create({
  model: ${m},
  messages: [{ role: "user", content: "Hello" }],
});
console.log(reply.choices[0].message.content);`],
    ],
    anthropic: [
      ['Python (anthropic)', `import os
from anthropic import Anthropic

client = Anthropic(base_url="${publicURL}", api_key=os.environ["ROSETTA_KEY"])
reply = client.messages.create(
    model=${m},
    max_tokens=1024,
    messages=[{"role": "user", "content": "Hello"}],
)
print(reply.content[0].text)`],
      ['JavaScript (@anthropic-ai/sdk)', `import Anthropic from "@anthropic-ai/sdk";

const client = new Anthropic({ baseURL: "${publicURL}", apiKey: process.env.ROSETTA_KEY });
const reply = await client.messages.create({
  model: ${m},
  max_tokens: 1024,
  messages: [{ role: "user", content: "Hello" }],
});
console.log(reply.content[0].text);`],
    ],
    gemini: [
      ['Python (google-genai)', `import os
from google import genai
from google.genai import types

# The SDK adds /v1beta itself, so it takes the gateway's root URL.
client = genai.Client(
    api_key=os.environ["ROSETTA_KEY"],
    http_options=types.HttpOptions(base_url="${publicURL}"),
)
reply = client.models.generate_content(model=${m}, contents="Hello")
print(reply.text)`],
      ['JavaScript (@google/genai)', `import { GoogleGenAI } from "@google/genai";

// The SDK adds /v1beta itself, so it takes the gateway's root URL.
const ai = new GoogleGenAI({ apiKey: process.env.ROSETTA_KEY, httpOptions: { baseUrl: "${publicURL}" } });
const reply = await ai.models.generateContent({ model: ${m}, contents: "Hello" });
console.log(reply.text);`],
    ],
  }[style];
  return [['curl', curl(style, publicURL, hello)], ...sdk];
}

// A parsed reply or stream event: {text, usage: {input, output}, error, done}.

function geminiPart(obj) {
  const parts = obj.candidates?.[0]?.content?.parts || [];
  const u = obj.usageMetadata;
  return {
    text: parts.map((p) => (p.thought ? '' : p.text || '')).join(''),
    usage: u && { input: u.promptTokenCount, output: u.candidatesTokenCount },
  };
}

// parseReply reads a whole (non-streamed) reply.
export function parseReply(style, obj) {
  if (style === 'anthropic') {
    const u = obj.usage || {};
    return {
      text: (obj.content || []).filter((b) => b.type === 'text').map((b) => b.text).join(''),
      usage: { input: u.input_tokens, output: u.output_tokens },
    };
  }
  if (style === 'gemini') return geminiPart(obj);
  const u = obj.usage || {};
  return { text: obj.choices?.[0]?.message?.content || '', usage: { input: u.prompt_tokens, output: u.completion_tokens } };
}

// parseEvent reads the data of one stream event.
export function parseEvent(style, data) {
  if (data === '[DONE]') return { done: true };
  const obj = JSON.parse(data);
  if (obj.error) return { error: obj.error.message || JSON.stringify(obj.error) };
  if (style === 'anthropic') {
    switch (obj.type) {
      case 'content_block_delta':
        return { text: obj.delta?.type === 'text_delta' ? obj.delta.text : '' };
      case 'message_start':
        return { usage: { input: obj.message?.usage?.input_tokens } };
      case 'message_delta':
        // Its counts are final; message_start's input count may be an
        // estimate made before the upstream answered.
        return { usage: { input: obj.usage?.input_tokens, output: obj.usage?.output_tokens } };
      case 'message_stop':
        return { done: true };
      default:
        return {};
    }
  }
  if (style === 'gemini') return geminiPart(obj);
  const u = obj.usage;
  return { text: obj.choices?.[0]?.delta?.content || '', usage: u && { input: u.prompt_tokens, output: u.completion_tokens } };
}

// sseData yields the data of each server-sent event in a response body as
// it arrives.
export async function* sseData(body) {
  const reader = body.getReader();
  const dec = new TextDecoder();
  let buf = '';
  for (;;) {
    const { value, done } = await reader.read();
    if (done) break;
    // Normalize line ends; a lone trailing \r waits for the next chunk, in
    // case it is half of a \r\n.
    buf = (buf + dec.decode(value, { stream: true })).replace(/\r\n|\r(?=[^\n])/g, '\n');
    let end;
    while ((end = buf.indexOf('\n\n')) >= 0) {
      const data = eventData(buf.slice(0, end));
      buf = buf.slice(end + 2);
      if (data !== null) yield data;
    }
  }
  const data = eventData(buf);
  if (data !== null) yield data;
}

function eventData(raw) {
  const lines = raw.split('\n').filter((l) => l.startsWith('data:')).map((l) => l.slice(5).replace(/^ /, ''));
  return lines.length ? lines.join('\n') : null;
}
