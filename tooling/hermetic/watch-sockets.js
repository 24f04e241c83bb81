'use strict';
/**
 * For tests that prove the guard: every TCP connect that reaches libuv, seen at the TCP handle
 * (below `net`, where the guard works), so the proof does not rest on the guard's own
 * bookkeeping. What `seen` lists is a socket actually opened.
 */
function watchSocketConnects() {
  // process.binding is deprecated for applications; for this proof it is the one view below net.
  const { TCP } = process.binding('tcp_wrap');
  const seen = [];
  const originals = { connect: TCP.prototype.connect, connect6: TCP.prototype.connect6 };
  for (const name of Object.keys(originals)) {
    TCP.prototype[name] = function (req, address, port) {
      seen.push(address);
      return originals[name].call(this, req, address, port);
    };
  }
  return { seen, restore: () => Object.assign(TCP.prototype, originals) };
}

module.exports = { watchSocketConnects };
