import fs from "node:fs/promises";
import path from "node:path";

const SANDBOX_UID_BASE = 1_000_000;
const SANDBOX_UID_SPAN = 1_000_000;

/**
 * The uid (and gid) of sandbox `id`'s user "user", the same inside and on the host: not root, owner
 * of nothing else on the machine (E2B's 1000 is a real user's on many hosts). One per sandbox,
 * because the kernel counts some limits per uid across namespaces (inotify instances and watches,
 * keyrings): one sandbox must not exhaust another's. Derived from the id, so a sandbox keeps its
 * uid, and its home's owner, across restarts; two ids sharing one only share those per-uid counts.
 */
export function sandboxUid(id: string): number {
  let hash = 0x811c9dc5;
  for (const byte of Buffer.from(id)) hash = Math.imul(hash ^ byte, 0x01000193) >>> 0;
  return SANDBOX_UID_BASE + (hash % SANDBOX_UID_SPAN);
}
export const SANDBOX_HOME = "/home/user";
export const SANDBOX_RUNTIME_DIR = "/run/sandbox";
/** Folder of the runtime directory that the wall owns (root's, read-only to the sandbox): /etc files and its sockets. */
export const WALL_DIR = ".wall";

/** Top-level system folders: merged-/usr symlinks are recreated, real folders bound read-only. */
const SYSTEM_TOP_LEVEL = ["bin", "sbin", "lib", "lib32", "lib64", "libx32"];
/** The secret-free part of the machine's /etc a userland needs (TLS roots, the loader, alternatives, time zone). */
const SYSTEM_ETC = [
  "alternatives",
  "ca-certificates",
  "ssl",
  "ld.so.cache",
  "ld.so.conf",
  "ld.so.conf.d",
  "localtime",
  "nsswitch.conf",
  "os-release",
  "debian_version",
  "mime.types",
  "protocols",
  "services",
  "bash.bashrc",
  "profile",
  "inputrc",
];

const generatedEtc = (uid: number): Record<string, string> => ({
  passwd: `root:x:0:0:root:/root:/usr/sbin/nologin\nuser:x:${uid}:${uid}:user:${SANDBOX_HOME}:/bin/bash\nnobody:x:65534:65534:nobody:/nonexistent:/usr/sbin/nologin\n`,
  group: `root:x:0:\nuser:x:${uid}:\nnogroup:x:65534:\n`,
  hosts: "127.0.0.1 localhost sandbox\n::1 localhost ip6-localhost ip6-loopback\n",
  hostname: "sandbox\n",
  // No name server inside: names are resolved by the egress proxy outside.
  "resolv.conf": "# resolved by the egress proxy outside the sandbox\n",
});

export interface MountSpec {
  uid: number;
  home: string;
  /** Host directory mounted read-write at /tmp; a private tmpfs when absent. */
  tmp?: string;
  runtimeDir: string;
  readOnly: Array<{ host: string; sandbox: string }>;
  /** Read-only files on the sandbox's own tmpfs root, their content read by bwrap from a file descriptor. */
  dataFiles: Array<{ fd: number; sandbox: string }>;
  cwd: string;
}

/**
 * bwrap's mount arguments for a sandbox. bwrap runs as root here, so it reaches the sandbox's
 * folders under any host parent (e.g. /root); it creates missing parents of a mount point 0700,
 * which the sandbox user could not traverse, so they are made 0755 first.
 */
export async function buildMounts(spec: MountSpec, wallDir: string): Promise<string[]> {
  const args: string[] = ["--ro-bind", "/usr", "/usr"];
  const present = new Set(["/", "/usr"]);
  const mount = (flag: string, hostPath: string, sandboxPath: string) => {
    const parts = sandboxPath.split("/").filter(Boolean);
    for (let depth = 1; depth < parts.length; depth++) {
      const parent = `/${parts.slice(0, depth).join("/")}`;
      if (present.has(parent)) continue;
      present.add(parent);
      args.push("--perms", "0755", "--dir", parent);
    }
    present.add(sandboxPath);
    args.push(flag, hostPath, sandboxPath);
  };
  for (const name of SYSTEM_TOP_LEVEL) {
    const hostPath = `/${name}`;
    const stat = await fs.lstat(hostPath).catch(() => undefined);
    if (stat?.isSymbolicLink()) args.push("--symlink", await fs.readlink(hostPath), hostPath);
    else if (stat?.isDirectory()) mount("--ro-bind", hostPath, hostPath);
  }
  args.push("--proc", "/proc", "--dev", "/dev");
  if (spec.tmp) args.push("--bind", spec.tmp, "/tmp");
  else args.push("--perms", "1777", "--tmpfs", "/tmp");
  present.add("/proc").add("/dev").add("/tmp");
  for (const name of SYSTEM_ETC) mount("--ro-bind-try", `/etc/${name}`, `/etc/${name}`);
  await fs.mkdir(path.join(wallDir, "etc"), { recursive: true });
  for (const [name, content] of Object.entries(generatedEtc(spec.uid))) {
    const hostPath = path.join(wallDir, "etc", name);
    await fs.writeFile(hostPath, content, { mode: 0o644 });
    mount("--ro-bind", hostPath, `/etc/${name}`);
  }
  mount("--bind", spec.home, SANDBOX_HOME);
  mount("--bind", spec.runtimeDir, SANDBOX_RUNTIME_DIR);
  // A mount point the sandbox can neither write into nor rename or replace (e.g. by a symlink the
  // service would follow when it closes the sockets there).
  mount("--ro-bind", wallDir, `${SANDBOX_RUNTIME_DIR}/${WALL_DIR}`);
  for (const readOnly of spec.readOnly) mount("--ro-bind", readOnly.host, readOnly.sandbox);
  for (const file of spec.dataFiles) {
    args.push("--perms", "0444");
    mount("--ro-bind-data", String(file.fd), file.sandbox);
  }
  // Nothing else of the sandbox's root (a tmpfs of bwrap's) is writable.
  args.push("--remount-ro", "/", "--chdir", spec.cwd);
  return args;
}
