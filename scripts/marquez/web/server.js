// Serves Marquez's web UI, as built from its source by `npm run build` (its dist/ folder), on
// loopback, and passes /api/v1 and /api/v2beta on to the Marquez API: what upstream's
// web/setupProxy.js does with express and http-proxy-middleware, here with node's own http
// module only, so that serving needs no node_modules (~700 MB) once the UI is built.
// Any other path that is not a file of dist/ gets index.html: the UI's own router draws
// /jobs, /datasets, /events, /lineage/<type>/<namespace>/<name>...; /healthcheck answers OK.
//
// Usage: node server.js DIST_DIR PORT API_URL     (scripts/marquez.sh start --ui runs it)
'use strict'

const fs = require('fs')
const http = require('http')
const path = require('path')

const HOST = '127.0.0.1'
const [distArg, portArg, apiArg] = process.argv.slice(2)
if (!distArg || !/^\d+$/.test(portArg || '') || !apiArg) {
  console.error('usage: node server.js DIST_DIR PORT API_URL')
  process.exit(2)
}
const dist = fs.realpathSync(distArg)
const port = Number(portArg)
const api = new URL(apiArg)
const index = path.join(dist, 'index.html')

const TYPES = {
  '.html': 'text/html; charset=utf-8',
  '.js': 'text/javascript; charset=utf-8',
  '.css': 'text/css; charset=utf-8',
  '.json': 'application/json',
  '.map': 'application/json',
  '.txt': 'text/plain; charset=utf-8',
  '.png': 'image/png',
  '.svg': 'image/svg+xml',
  '.ico': 'image/x-icon',
  '.ttf': 'font/ttf',
  '.woff': 'font/woff',
  '.woff2': 'font/woff2',
}

const isApi = (pathname) => /^\/api\/(v1|v2beta)(\/|$)/.test(pathname)

function proxy(req, res) {
  const headers = { ...req.headers, host: api.host }
  const upstream = http.request(
    { host: api.hostname, port: api.port || 80, method: req.method, path: req.url, headers },
    (answer) => {
      res.writeHead(answer.statusCode, answer.headers)
      answer.pipe(res)
    }
  )
  upstream.on('error', (err) => {
    console.error(`marquez web: ${req.method} ${req.url}: the API at ${api.origin} did not answer (${err.message})`)
    if (!res.headersSent) res.writeHead(502, { 'content-type': 'text/plain; charset=utf-8' })
    res.end(`the Marquez API at ${api.origin} did not answer: ${err.message}\n`)
  })
  req.pipe(upstream)
}

function send(req, res, file, status) {
  fs.stat(file, (err, stat) => {
    if (err || !stat.isFile()) {
      res.writeHead(404, { 'content-type': 'text/plain; charset=utf-8' })
      res.end('not found\n')
      return
    }
    res.writeHead(status, {
      'content-type': TYPES[path.extname(file)] || 'application/octet-stream',
      'content-length': stat.size,
      'cache-control': file === index ? 'no-cache' : 'public, max-age=3600',
    })
    if (req.method === 'HEAD') res.end()
    else fs.createReadStream(file).pipe(res)
  })
}

const server = http.createServer((req, res) => {
  let pathname
  try {
    pathname = decodeURIComponent(new URL(req.url, 'http://localhost').pathname)
  } catch (err) {
    res.writeHead(400, { 'content-type': 'text/plain; charset=utf-8' })
    res.end('bad request\n')
    return
  }
  if (isApi(pathname)) return proxy(req, res)
  if (req.method !== 'GET' && req.method !== 'HEAD') {
    res.writeHead(405, { allow: 'GET, HEAD' })
    res.end()
    return
  }
  if (pathname === '/healthcheck') {
    res.writeHead(200, { 'content-type': 'text/plain; charset=utf-8' })
    res.end('OK')
    return
  }
  const file = path.join(dist, path.normalize(pathname))
  if (!file.startsWith(dist + path.sep)) return send(req, res, index, 200)
  fs.stat(file, (err, stat) => send(req, res, !err && stat.isFile() ? file : index, 200))
})

server.on('error', (err) => {
  console.error(`marquez web: ${err.message}`)
  process.exit(1)
})
server.listen(port, HOST, () => {
  console.log(`marquez web: serving ${dist} on http://${HOST}:${port}, API at ${api.origin}`)
})
