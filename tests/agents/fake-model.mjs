// A scripted model on 127.0.0.1 for the released agent CLIs.
//
//   node fake-model.mjs API SCRIPT LOG PORTFILE
//
// API is the wire format the CLI speaks: `anthropic` (Messages API, SSE
// when asked), `openai` (Responses API, SSE), `chat` (OpenAI Chat
// Completions, SSE when asked: what OpenAI-compatible providers speak),
// `gemini` (generateContent and streamGenerateContent). SCRIPT is a JSON list of turns, each
// `{"tool": NAME, "args": {...}}` (the model calls a tool; with
// `"namespace": NS` for a tool the CLI offers inside a namespace) or
// `{"text": "..."}` (the model answers and ends its turn); `{{session}}`
// anywhere in a turn is replaced as `takeTurn` says. Every request
// that offers tools is a turn of the agent's conversation and gets the next
// turn of the script (a final "done." once the script is spent); any other
// request (titles, classifiers, token counts) gets a short neutral answer.
// Every request is appended to LOG as one JSON line
// `{"n", "path", "turn", "body"}`; the port listened on is written to
// PORTFILE once the server is up.
import http from "node:http";
import fs from "node:fs";

const [api, scriptPath, logPath, portFile] = process.argv.slice(2);
const script = JSON.parse(fs.readFileSync(scriptPath, "utf8"));
let next = 0;
let n = 0;
let ids = 0;

function record(entry) {
  fs.appendFileSync(logPath, JSON.stringify(entry) + "\n");
}

// Server-sent events; `done` ends the stream with `data: [DONE]`, as
// Chat Completions streams end.
function sse(res, events, done = false) {
  res.writeHead(200, {
    "content-type": "text/event-stream",
    "cache-control": "no-cache",
    connection: "close",
  });
  for (const [name, data] of events) {
    if (name) res.write(`event: ${name}\n`);
    res.write(`data: ${JSON.stringify(data)}\n\n`);
  }
  if (done) res.write("data: [DONE]\n\n");
  res.end();
}

function json(res, value, status = 200) {
  const text = JSON.stringify(value);
  res.writeHead(status, { "content-type": "application/json" });
  res.end(text);
}

// A turn of the script; `{{session}}` in its arguments becomes the bsi
// session the conversation so far names ("Your bsi session: ID"), as a
// model reading bsi's session-start context would write it.
function takeTurn(body) {
  const t = next < script.length ? script[next] : { text: "done." };
  next += 1;
  const m = JSON.stringify(body).match(/Your bsi session: (sess-[A-Za-z0-9-]+)/);
  const text = JSON.stringify(t).replaceAll("{{session}}", m ? m[1] : "NO-SESSION-SEEN");
  return JSON.parse(text);
}

// --- Anthropic Messages ---------------------------------------------------

function anthropic(req, res, body, url) {
  if (url.pathname.endsWith("/count_tokens")) return json(res, { input_tokens: 100 });
  if (!url.pathname.endsWith("/messages")) return json(res, {});
  const isTurn = Array.isArray(body.tools) && body.tools.length > 0;
  const turn = isTurn ? takeTurn(body) : { text: "ok" };
  record({ n: n++, path: url.pathname, turn: isTurn ? next - 1 : null, body });
  const id = `msg_${++ids}`;
  const usage = { input_tokens: 10, output_tokens: 5 };
  let block, stop;
  if (turn.tool) {
    block = { type: "tool_use", id: `toolu_${ids}`, name: turn.tool, input: turn.args };
    stop = "tool_use";
  } else {
    block = { type: "text", text: turn.text };
    stop = "end_turn";
  }
  const message = {
    id,
    type: "message",
    role: "assistant",
    model: body.model,
    content: [block],
    stop_reason: stop,
    stop_sequence: null,
    usage,
  };
  if (!body.stream) return json(res, message);
  const start = block.type === "tool_use" ? { ...block, input: {} } : { type: "text", text: "" };
  const delta =
    block.type === "tool_use"
      ? { type: "input_json_delta", partial_json: JSON.stringify(block.input) }
      : { type: "text_delta", text: block.text };
  sse(res, [
    ["message_start", { type: "message_start", message: { ...message, content: [], stop_reason: null } }],
    ["content_block_start", { type: "content_block_start", index: 0, content_block: start }],
    ["content_block_delta", { type: "content_block_delta", index: 0, delta }],
    ["content_block_stop", { type: "content_block_stop", index: 0 }],
    ["message_delta", { type: "message_delta", delta: { stop_reason: stop, stop_sequence: null }, usage }],
    ["message_stop", { type: "message_stop" }],
  ]);
}

// --- OpenAI Responses -----------------------------------------------------

function openai(req, res, body, url) {
  if (url.pathname.endsWith("/models")) return json(res, { object: "list", data: [], models: [] });
  if (!url.pathname.endsWith("/responses")) return json(res, {});
  const isTurn = Array.isArray(body.tools) && body.tools.length > 0;
  const turn = isTurn ? takeTurn(body) : { text: "ok" };
  record({ n: n++, path: url.pathname, turn: isTurn ? next - 1 : null, body });
  const id = `resp_${++ids}`;
  let item;
  if (turn.tool && turn.custom) {
    item = { type: "custom_tool_call", id: `ctc_${ids}`, call_id: `call_${ids}`, name: turn.tool, input: turn.args, status: "completed" };
  } else if (turn.tool) {
    item = { type: "function_call", id: `fc_${ids}`, call_id: `call_${ids}`, name: turn.tool, arguments: JSON.stringify(turn.args), status: "completed" };
    // A tool of a namespace (Codex offers an MCP server's tools as one).
    if (turn.namespace) item.namespace = turn.namespace;
  } else {
    item = {
      type: "message",
      id: `msg_${ids}`,
      role: "assistant",
      status: "completed",
      content: [{ type: "output_text", text: turn.text, annotations: [] }],
    };
  }
  const usage = {
    input_tokens: 10,
    input_tokens_details: { cached_tokens: 0 },
    output_tokens: 5,
    output_tokens_details: { reasoning_tokens: 0 },
    total_tokens: 15,
  };
  const response = { id, object: "response", status: "completed", model: body.model, output: [item], usage };
  sse(res, [
    ["response.created", { type: "response.created", response: { ...response, status: "in_progress", output: [] } }],
    ["response.output_item.added", { type: "response.output_item.added", output_index: 0, item }],
    ["response.output_item.done", { type: "response.output_item.done", output_index: 0, item }],
    ["response.completed", { type: "response.completed", response }],
  ]);
}

// --- OpenAI Chat Completions ----------------------------------------------

function chat(req, res, body, url) {
  if (url.pathname.endsWith("/models")) return json(res, { object: "list", data: [{ id: "fake", object: "model", owned_by: "bsi" }] });
  if (!url.pathname.endsWith("/chat/completions")) return json(res, {});
  const isTurn = Array.isArray(body.tools) && body.tools.length > 0;
  const turn = isTurn ? takeTurn(body) : { text: "ok" };
  record({ n: n++, path: url.pathname, turn: isTurn ? next - 1 : null, body });
  const id = `chatcmpl_${++ids}`;
  const created = Math.floor(Date.now() / 1000);
  const usage = { prompt_tokens: 10, completion_tokens: 5, total_tokens: 15 };
  const call = turn.tool
    ? { id: `call_${ids}`, type: "function", function: { name: turn.tool, arguments: JSON.stringify(turn.args) } }
    : null;
  const message = call
    ? { role: "assistant", content: null, tool_calls: [call] }
    : { role: "assistant", content: turn.text };
  const finish = call ? "tool_calls" : "stop";
  const base = { id, object: "chat.completion.chunk", created, model: body.model };
  if (!body.stream) {
    return json(res, { id, object: "chat.completion", created, model: body.model, choices: [{ index: 0, message, finish_reason: finish }], usage });
  }
  const delta = call
    ? { role: "assistant", content: null, tool_calls: [{ index: 0, ...call }] }
    : { role: "assistant", content: turn.text };
  sse(res, [
    [null, { ...base, choices: [{ index: 0, delta, finish_reason: null }] }],
    [null, { ...base, choices: [{ index: 0, delta: {}, finish_reason: finish }], usage }],
  ], true);
}

// --- Gemini ---------------------------------------------------------------

function gemini(req, res, body, url) {
  const p = url.pathname;
  if (p.endsWith(":countTokens")) return json(res, { totalTokens: 100 });
  if (!p.includes(":generateContent") && !p.includes(":streamGenerateContent")) return json(res, {});
  const tools = (body.tools || []).flatMap((t) => t.functionDeclarations || []);
  const isTurn = tools.length > 0;
  const cfg = body.generationConfig || body.config || {};
  let turn;
  if (isTurn) turn = takeTurn(body);
  else if (cfg.responseMimeType === "application/json" || cfg.responseSchema || cfg.responseJsonSchema)
    turn = { text: JSON.stringify({ next_speaker: "user", reasoning: "scripted", model_choice: "flash" }) };
  else turn = { text: "ok" };
  record({ n: n++, path: p, turn: isTurn ? next - 1 : null, body });
  const part = turn.tool ? { functionCall: { name: turn.tool, args: turn.args } } : { text: turn.text };
  const chunk = {
    candidates: [{ content: { role: "model", parts: [part] }, finishReason: "STOP", index: 0 }],
    usageMetadata: { promptTokenCount: 10, candidatesTokenCount: 5, totalTokenCount: 15 },
    modelVersion: "fake",
  };
  if (p.includes(":streamGenerateContent")) return sse(res, [[null, chunk]]);
  return json(res, chunk);
}

const handlers = { anthropic, openai, chat, gemini };
const handler = handlers[api];
if (!handler) {
  console.error(`fake-model: unknown API ${api}`);
  process.exit(2);
}

const server = http.createServer((req, res) => {
  const chunks = [];
  req.on("data", (c) => chunks.push(c));
  req.on("end", () => {
    const url = new URL(req.url, "http://127.0.0.1");
    let body = {};
    const text = Buffer.concat(chunks).toString("utf8");
    if (text) {
      try {
        body = JSON.parse(text);
      } catch {
        body = { raw: text };
      }
    }
    if (req.method !== "POST") {
      record({ n: n++, path: url.pathname, method: req.method, turn: null, body: {} });
      return json(res, {});
    }
    try {
      handler(req, res, body, url);
    } catch (e) {
      record({ n: n++, path: url.pathname, error: String(e), turn: null, body });
      json(res, { error: String(e) }, 500);
    }
  });
});
server.listen(0, "127.0.0.1", () => {
  fs.writeFileSync(portFile, String(server.address().port));
});
