import type { ReactNode } from "react";
import { HydrationMark } from "./_components/hydration-mark";
import { ToastHost } from "./_components/toast";
import "./globals.css";

export const metadata = {
  title: "Cloud backend service",
  description: "One-click cloud backend and file storage for AI-built mobile apps.",
};

export default function RootLayout({ children }: { children: ReactNode }) {
  return (
    <html lang="en">
      <body>
        {children}
        <ToastHost />
        <HydrationMark />
      </body>
    </html>
  );
}
