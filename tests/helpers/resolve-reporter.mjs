/**
 * Module hooks (`module.register`) that post every URL an import resolves to onto the port
 * handed in `data`; tests/helpers/loaded-packages.ts reads them to learn which packages a
 * process loaded through `import`.
 */
let port;

export function initialize(data) {
  port = data.port;
}

export async function resolve(specifier, context, nextResolve) {
  const resolved = await nextResolve(specifier, context);
  port.postMessage(resolved.url);
  return resolved;
}
