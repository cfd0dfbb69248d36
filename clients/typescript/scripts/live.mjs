// Against a running service: node scripts/live.mjs URL WRITE_KEY READ_KEY DIR. Prints one JSON line of what it saw;
// tests/clients/test_typescript_client.py starts the service and reads it.
import { TwinMemory, InvalidArguments, InsufficientScope, NoMemory, Unauthorized, ConnectionFailed } from "../dist/esm/index.js";

const [url, key, readKey, dir] = process.argv.slice(2);
const seen = {};
const twin = new TwinMemory({ apiKey: key, account: "u_1", baseUrl: url });
const added = await twin.add({ items: [{ text: "I moved to Porto", id: "home" }], wait: true });
seen.added = added.items[0].status;
seen.found = (await twin.search({ query: "Where do I live?" })).hits[0].text;
const caught = async (call) => call().catch((error) => error);
const errors = {
  invalid: await caught(() => twin.search({ query: "x".repeat(2001) })),
  scope: await caught(() => new TwinMemory({ apiKey: readKey, account: "u_1", baseUrl: url }).add({ items: [{ text: "no" }] })),
  noMemory: await caught(() => twin.forAccount("nobody_yet").overview()),
  unauthorized: await caught(() => new TwinMemory({ apiKey: "tm_not_a_key", account: "u_1", baseUrl: url }).overview()),
  refused: await caught(() => new TwinMemory({ apiKey: key, account: "u_1", baseUrl: "http://127.0.0.1:9" }).overview()),
};
const kinds = { invalid: InvalidArguments, scope: InsufficientScope, noMemory: NoMemory, unauthorized: Unauthorized, refused: ConnectionFailed };
seen.classes = Object.fromEntries(Object.entries(errors).map(([name, error]) => [name, error instanceof kinds[name]]));
seen.field = [errors.invalid.field, errors.invalid.bound, Boolean(errors.invalid.requestId)];
seen.keyShown = Object.values(errors).some((error) => `${error.message}${error.stack}`.includes(key));
const path = `${dir}/u_1.jsonl`;
seen.written = await twin.exportToFile(path);
seen.imported = (await twin.forAccount("u_2").import(path)).statuses;
const lines = [];
for await (const line of twin.forAccount("u_2").export()) lines.push(line);
seen.lines = lines.length;
console.log(JSON.stringify(seen));
