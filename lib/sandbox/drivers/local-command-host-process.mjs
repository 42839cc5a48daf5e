// The local sandbox driver's command host: a small Node process the server starts once, early,
// while it is small (see local-command-host.ts). Forking copies the parent's page tables and
// blocks its event loop in proportion to its resident memory, so the big server never forks on a
// request path: it asks this process over IPC, which spawns the child and streams back its
// output and end.
import { spawn } from "node:child_process";

/**
 * After the command itself exited, how long to keep reading output that descendants still hold
 * open (`cmd &`): the result must not wait for a daemon the command left behind.
 */
const OUTPUT_GRACE_MS = 100;

const send = (message) => {
  if (process.connected) process.send(message);
};

// Ctrl-C in a terminal reaches the whole process group: the server decides when this ends.
process.on("SIGINT", () => undefined);
// The server is gone (however it died): exiting closes every command's lifeline pipe, and each
// supervisor then kills its process group.
process.on("disconnect", () => process.exit(0));

process.on("message", ({ id, file, args, cwd, env }) => {
  const child = spawn(file, args, {
    cwd,
    env,
    detached: true,
    // stdin is the supervisor's lifeline: never written to, closed only by this process's death.
    stdio: ["pipe", "pipe", "pipe"],
  });
  child.stdin.on("error", () => undefined);
  if (child.pid === undefined) {
    child.once("error", (error) => send({ type: "failed", id, message: error.message }));
    return;
  }
  send({ type: "started", id, pid: child.pid });
  child.stdout.on("data", (data) => send({ type: "output", id, stream: "stdout", data }));
  child.stderr.on("data", (data) => send({ type: "output", id, stream: "stderr", data }));
  child.once("exit", () => {
    setTimeout(() => {
      child.stdout.destroy();
      child.stderr.destroy();
    }, OUTPUT_GRACE_MS).unref();
  });
  child.once("close", (code, signal) => send({ type: "close", id, code, signal }));
});
