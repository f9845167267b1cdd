// Preloaded (node --import) into a reference server the tests start: every
// server it listens with binds 127.0.0.1 on a port the system picks, and
// its address is printed on stderr as "crawlcheck-listening URL" (the
// reference servers take a fixed PORT and bind every interface).
import net from "node:net";

const listen = net.Server.prototype.listen;
net.Server.prototype.listen = function (...args) {
  const cb = args.find((a) => typeof a === "function");
  this.once("listening", () => {
    const a = this.address();
    if (a && typeof a === "object") process.stderr.write(`crawlcheck-listening http://127.0.0.1:${a.port}\n`);
  });
  return listen.call(this, 0, "127.0.0.1", cb);
};
