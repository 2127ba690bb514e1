// The sandbox end of an agent's egress: `node egress-relay.mjs <unix socket> <port> -- <command> [args…]`.
// A sandbox with egress has a network namespace of its own, so its programs cannot reach the service's
// proxy over TCP; they are told HTTP(S)_PROXY=http://127.0.0.1:<port>, and this relays each connection
// there to the proxy's unix socket, bound into the sandbox. Runs inside the sandbox on the Node the
// project ships (>= 18): plain JavaScript, no dependencies.
import { spawn } from "node:child_process";
import { connect, createServer } from "node:net";
import { constants } from "node:os";

const [socketPath, port, separator, command, ...args] = process.argv.slice(2);
if (!socketPath || !/^\d+$/.test(port ?? "") || separator !== "--" || !command) {
  process.stderr.write("usage: egress-relay.mjs <unix socket> <port> -- <command> [args…]\n");
  process.exit(2);
}

// Half-open allowed on both legs: a client that ends its request still gets the whole answer.
const server = createServer({ allowHalfOpen: true }, (client) => {
  const proxy = connect({ path: socketPath, allowHalfOpen: true });
  const drop = () => {
    client.destroy();
    proxy.destroy();
  };
  for (const socket of [client, proxy]) socket.on("error", drop).on("close", drop);
  client.pipe(proxy);
  proxy.pipe(client);
});

server.on("error", (error) => {
  process.stderr.write(`egress-relay: cannot listen on 127.0.0.1:${port}: ${error.message}\n`);
  process.exit(1);
});

server.listen(Number(port), "127.0.0.1", run);

// Signals meant for the command (a terminal's, a supervisor's) are passed on to it.
const FORWARDED = ["SIGINT", "SIGTERM", "SIGHUP", "SIGQUIT"];

function run() {
  const child = spawn(command, args, { stdio: "inherit" });
  const forward = (signal) => child.kill(signal);
  for (const signal of FORWARDED) process.on(signal, forward);
  child.on("error", (error) => {
    // Only a failed spawn ends the relay here; the child's own end comes as "exit".
    if (child.pid !== undefined) return;
    process.stderr.write(`${command}: ${error.message}\n`);
    process.exit(127);
  });
  child.on("exit", (code, signal) => {
    server.close();
    if (signal === null) process.exit(code ?? 1);
    // End the way the command did, so whoever waits on the sandbox sees the signal.
    for (const name of FORWARDED) process.off(name, forward);
    process.kill(process.pid, signal);
    // Some signals do not end Node (SIGPIPE is ignored) and none end a namespace's pid 1: the shell's code.
    setTimeout(() => process.exit(128 + (constants.signals[signal] ?? 0)), 100);
  });
}
