// The client's own behaviour over a fake fetch: headers, errors, retries, the export's lines, CommonJS.
import { test } from "node:test";
import assert from "node:assert/strict";
import { createRequire } from "node:module";
import { TwinMemory, InvalidArguments, NoMemory, Unavailable, ConnectionFailed } from "../dist/esm/index.js";

const KEY = "tm_secret_key_0123456789";

function fake(answers) {
  const seen = [];
  const fetch = async (url, init) => {
    seen.push({ url, init });
    const next = answers.shift();
    if (next instanceof Error) throw next;
    return next;
  };
  return { seen, fetch };
}

const json = (status, body, headers = {}) =>
  new Response(JSON.stringify(body), { status, headers: { "Content-Type": "application/json", ...headers } });

function client(fetch, extra = {}) {
  const slept = [];
  let now = 0;
  const twin = new TwinMemory({
    apiKey: KEY, account: "u_1", baseUrl: "http://memory.test", fetch,
    now: () => now, sleep: async (ms) => { slept.push(ms); now += ms; }, ...extra,
  });
  return { twin, slept };
}

test("a call sends the key, the end user and the user agent", async () => {
  const { seen, fetch } = fake([json(200, { query: "q", mode: "brief", found: 0, hits: [] })]);
  const { twin } = client(fetch);
  assert.equal((await twin.search({ query: "q" })).mode, "brief");
  const { url, init } = seen[0];
  assert.equal(url, "http://memory.test/v1/memory/search");
  assert.equal(init.headers.Authorization, `Bearer ${KEY}`);
  assert.equal(init.headers["X-Twin-Account"], "u_1");
  assert.match(init.headers["User-Agent"], /^twin-memory-typescript\/0\./);
  assert.ok(init.signal instanceof AbortSignal);
});

test("an error answer throws its class with field, bound and request id", async () => {
  const body = { error: "invalid_arguments", message: "too long", field: "query", bound: 2000 };
  const { fetch } = fake([json(400, body, { "X-Request-Id": "req-1" })]);
  const error = await client(fetch).twin.search({ query: "q" }).catch((e) => e);
  assert.ok(error instanceof InvalidArguments);
  assert.deepEqual([error.code, error.field, error.bound, error.requestId], ["invalid_arguments", "query", 2000, "req-1"]);
});

test("503 is retried after Retry-After, at most twice; 404 no_memory is NoMemory", async () => {
  const busy = () => json(503, { error: "unavailable", message: "busy" }, { "Retry-After": "2" });
  const { fetch } = fake([busy(), busy(), busy()]);
  const { twin, slept } = client(fetch);
  assert.ok((await twin.latest().catch((e) => e)) instanceof Unavailable);
  assert.deepEqual(slept, [2000, 2000]);
  const none = fake([json(404, { error: "no_memory", message: "nothing" })]);
  assert.ok((await client(none.fetch).twin.overview().catch((e) => e)) instanceof NoMemory);
});

test("a refused connection names the URL, never the key; forAccount refuses an OAuth token", async () => {
  const { fetch } = fake([new TypeError("fetch failed")]);
  const { twin } = client(fetch);
  const error = await twin.overview().catch((e) => e);
  assert.ok(error instanceof ConnectionFailed);
  assert.match(error.message, /http:\/\/memory\.test\/v1\/memory\/overview/);
  for (const text of [error.message, String(error.stack), JSON.stringify(twin)]) assert.ok(!text.includes(KEY));
  assert.throws(() => new TwinMemory({ apiKey: "oauth-token", baseUrl: "http://x" }).forAccount("u_2"), TypeError);
});

test("export yields the JSON lines", async () => {
  const { fetch } = fake([new Response('{"a":1}\n{"b":2}\n')]);
  const lines = [];
  for await (const line of client(fetch).twin.export()) lines.push(line);
  assert.deepEqual(lines, [{ a: 1 }, { b: 2 }]);
});

test("the CommonJS build loads", () => {
  const require = createRequire(import.meta.url);
  assert.equal(typeof require("../dist/cjs/index.js").TwinMemory, "function");
});
