// Inserted into the app's root layout (app/_layout.tsx) by lib/injection. Only the code below the
// import is copied; the import is merged with the layout's own imports, and `.jsx` layouts get
// the same code without the type annotation.
import { ConvexProvider, ConvexReactClient } from "convex/react";

// Cloud backend client: null while EXPO_PUBLIC_CONVEX_URL is unset, so the app also runs without a
// backend. Always read as `process.env.EXPO_PUBLIC_CONVEX_URL`: Expo inlines only that exact form.
const backendClient = process.env.EXPO_PUBLIC_CONVEX_URL
  ? new ConvexReactClient(process.env.EXPO_PUBLIC_CONVEX_URL, { unsavedChangesWarning: false })
  : null;

function BackendWrapper({ children }: { children: React.ReactNode }) {
  if (!backendClient) return <>{children}</>;
  return <ConvexProvider client={backendClient}>{children}</ConvexProvider>;
}
