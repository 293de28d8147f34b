// The upstream API of examples/pets.openapi.json, in memory: `node examples/pets-upstream.mjs`
// listens on http://127.0.0.1:4010 (PETS_PORT to change it: PORT is toolgate's own). No
// dependencies; for trying toolgate out.
import { createServer } from 'node:http';

const port = Number(process.env.PETS_PORT ?? 4010);
const pets = [
  { id: 1, name: 'Rex', tag: 'dog' },
  { id: 2, name: 'Tom', tag: 'cat' },
];

function send(res, status, body) {
  res.writeHead(status, { 'content-type': 'application/json' });
  res.end(JSON.stringify(body));
}

const server = createServer((req, res) => {
  const url = new URL(req.url ?? '/', 'http://localhost');
  const one = /^\/pets\/(\d+)$/.exec(url.pathname);
  if (req.method === 'GET' && url.pathname === '/pets') {
    const limit = Number(url.searchParams.get('limit') ?? pets.length);
    return send(res, 200, pets.slice(0, limit));
  }
  if (req.method === 'GET' && one) {
    const pet = pets.find((p) => p.id === Number(one[1]));
    return pet ? send(res, 200, pet) : send(res, 404, { message: `no pet ${one[1]}` });
  }
  if (req.method === 'POST' && url.pathname === '/pets') {
    let text = '';
    req.on('data', (chunk) => {
      text += chunk;
    });
    req.on('end', () => {
      try {
        const { name, tag } = JSON.parse(text);
        const pet = { id: pets.length + 1, name, ...(tag ? { tag } : {}) };
        pets.push(pet);
        send(res, 201, pet);
      } catch {
        send(res, 400, { message: 'body must be JSON' });
      }
    });
    return;
  }
  send(res, 404, { message: 'not found' });
});

server.listen(port, '127.0.0.1', () => {
  process.stderr.write(`pets upstream on http://127.0.0.1:${port}\n`);
});
for (const signal of ['SIGINT', 'SIGTERM']) process.on(signal, () => server.close(() => process.exit(0)));
