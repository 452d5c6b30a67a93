// Serves Data.Rentgen's web UI, as built from its source by `npm run build` (its dist/ folder),
// on loopback, and passes /v1/ on to its REST server: what upstream's docker image does with
// nginx and an env-config.js written at start, here with node's own http module only, so that
// serving needs no node_modules once the UI is built. The page is told (window.env) that the
// API is at its own origin, with the dummy auth provider (any name and password logs in).
// Any other path that is not a file of dist/ gets index.html: the UI's own router draws
// /jobs, /runs, /datasets, /locations...; /healthcheck answers OK.
//
// Usage: node server.js DIST_DIR PORT API_URL     (scripts/data-rentgen.sh start --ui runs it)
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
const ENV_CONFIG = '/env-config.js'
const index = fs
  .readFileSync(path.join(dist, 'index.html'), 'utf8')
  .replace('</head>', `    <script src="${ENV_CONFIG}"></script>\n    </head>`)
const envConfig =
  'window.env = { API_URL: window.location.origin, AUTH_PROVIDER: "dummyAuthProvider" };\n'

const TYPES = {
  '.html': 'text/html; charset=utf-8',
  '.js': 'text/javascript; charset=utf-8',
  '.css': 'text/css; charset=utf-8',
  '.json': 'application/json',
  '.svg': 'image/svg+xml',
  '.png': 'image/png',
  '.ico': 'image/x-icon',
  '.ttf': 'font/ttf',
  '.woff': 'font/woff',
  '.woff2': 'font/woff2',
}

const isApi = (pathname) => /^\/v1(\/|$)/.test(pathname)

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
    console.error(`data-rentgen web: ${req.method} ${req.url}: the API at ${api.origin} did not answer (${err.message})`)
    if (!res.headersSent) res.writeHead(502, { 'content-type': 'text/plain; charset=utf-8' })
    res.end(`Data.Rentgen's REST API at ${api.origin} did not answer: ${err.message}\n`)
  })
  req.pipe(upstream)
}

function text(res, status, type, body, cache) {
  res.writeHead(status, {
    'content-type': type,
    'content-length': Buffer.byteLength(body),
    'cache-control': cache,
  })
  res.end(body)
}

function send(req, res, file) {
  fs.stat(file, (err, stat) => {
    if (err || !stat.isFile()) return text(res, 200, TYPES['.html'], index, 'no-cache')
    res.writeHead(200, {
      'content-type': TYPES[path.extname(file)] || 'application/octet-stream',
      'content-length': stat.size,
      'cache-control': 'public, max-age=3600',
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
    return text(res, 400, 'text/plain; charset=utf-8', 'bad request\n', 'no-cache')
  }
  if (isApi(pathname)) return proxy(req, res)
  if (req.method !== 'GET' && req.method !== 'HEAD') {
    res.writeHead(405, { allow: 'GET, HEAD' })
    return res.end()
  }
  if (pathname === '/healthcheck') return text(res, 200, 'text/plain; charset=utf-8', 'OK', 'no-cache')
  if (pathname === ENV_CONFIG) return text(res, 200, TYPES['.js'], envConfig, 'no-cache')
  if (pathname === '/' || pathname === '/index.html') {
    return text(res, 200, TYPES['.html'], index, 'no-cache')
  }
  const file = path.join(dist, path.normalize(pathname))
  if (!file.startsWith(dist + path.sep)) return text(res, 200, TYPES['.html'], index, 'no-cache')
  send(req, res, file)
})

server.on('error', (err) => {
  console.error(`data-rentgen web: ${err.message}`)
  process.exit(1)
})
server.listen(port, HOST, () => {
  console.log(`data-rentgen web: serving ${dist} on http://${HOST}:${port}, API at ${api.origin}`)
})
