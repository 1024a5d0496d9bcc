/** The ceilings the benchmark measures Gatehouse against, each run as its own pinned process. */
import http from 'node:http';
import express from 'express';

const [kind, port] = process.argv.slice(2);
const body = JSON.stringify({ hello: 'world' });

if (kind === 'node') {
  http
    .createServer((_req, res) => {
      res.writeHead(200, { 'content-type': 'application/json' }).end(body);
    })
    .listen(Number(port), '127.0.0.1');
} else if (kind === 'express') {
  const app = express();
  app.get('/', (_req, res) => {
    res.json({ hello: 'world' });
  });
  app.listen(Number(port), '127.0.0.1');
} else {
  throw new Error(`unknown ceiling ${kind}`);
}
