"use client";

import { useEffect, useState } from "react";

export type ToastTone = "success" | "error";

interface Toast {
  id: number;
  message: string;
  tone: ToastTone;
}

/** Long enough to read a sentence; a toast can also be closed at once, and an error stays until it is. */
const TOAST_VISIBLE_MS = 8_000;

let nextToastId = 1;
/** The mounted host; toasts shown before it mounted (a page's own effects run first) wait in `pending`. */
let deliver: ((toast: Toast) => void) | null = null;
const pending: Toast[] = [];

/** Shows a toast from anywhere in the dashboard (the host in the root layout displays it). */
export function showToast(message: string, tone: ToastTone): void {
  const toast = { id: nextToastId++, message, tone };
  if (deliver) deliver(toast);
  else pending.push(toast);
}

/** The stack of toasts, bottom right; announced to screen readers as they appear. */
export function ToastHost() {
  const [toasts, setToasts] = useState<Toast[]>([]);

  useEffect(() => {
    const timers = new Set<ReturnType<typeof setTimeout>>();
    const onToast = (toast: Toast) => {
      setToasts((current) => [...current, toast]);
      if (toast.tone === "error") return;
      const timer = setTimeout(() => {
        timers.delete(timer);
        setToasts((current) => current.filter((item) => item.id !== toast.id));
      }, TOAST_VISIBLE_MS);
      timers.add(timer);
    };
    deliver = onToast;
    for (const toast of pending.splice(0)) onToast(toast);
    return () => {
      deliver = null;
      for (const timer of timers) clearTimeout(timer);
    };
  }, []);

  return (
    <div className="toasts" aria-live="polite">
      {toasts.map((toast) => (
        <div key={toast.id} className={`toast toast-${toast.tone}`} role={toast.tone === "error" ? "alert" : "status"} data-testid="toast" data-tone={toast.tone}>
          <span>{toast.message}</span>
          <button type="button" className="link-button" aria-label="Close" onClick={() => setToasts((current) => current.filter((item) => item.id !== toast.id))}>
            ×
          </button>
        </div>
      ))}
    </div>
  );
}

/**
 * Shows one toast when the page opens with the outcome of a round trip elsewhere (OAuth), and
 * takes that outcome out of the address, so a reload does not announce it again.
 */
export function ToastOnOpen({ message, tone }: { message: string | null; tone: ToastTone }) {
  useEffect(() => {
    if (!message) return;
    showToast(message, tone);
    window.history.replaceState(window.history.state, "", window.location.pathname);
  }, [message, tone]);
  return null;
}
