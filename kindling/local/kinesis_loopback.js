// Preloaded into kinesis-local (`node --require`): every server it starts listens on 127.0.0.1 only.
// kinesis-local binds 0.0.0.0 in its code and has no setting for the host.
'use strict';
const net = require('net');
const listen = net.Server.prototype.listen;
const HOST = process.env.KINDLING_BIND_HOST || '127.0.0.1';
net.Server.prototype.listen = function (...args) {
  const first = args[0];
  if (typeof first === 'number' || (typeof first === 'string' && /^\d+$/.test(first))) {
    const rest = args.slice(1);
    if (typeof rest[0] === 'string') rest.shift(); // the host it asked for
    return listen.call(this, Number(first), HOST, ...rest);
  }
  if (first !== null && typeof first === 'object' && !(first instanceof net.Server) && first.path === undefined
      && ('port' in first || 'host' in first)) {
    args[0] = Object.assign({}, first, { host: HOST });
  }
  return listen.apply(this, args);
};
